"""barrier on 2 CPU processes (gloo): rank 0 prepares a file while the other rank waits for it.

Run it with `python examples/dist_barrier.py`.
"""
import os
import socket
import tempfile
import time

import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, folder, report):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    path = os.path.join(folder, "vocab.txt")

    if rank == 0:
        time.sleep(1.0)  # stands for a slow download or preprocessing step, done once
        with open(path, "w") as f:
            f.write("hello world")

    start = time.perf_counter()
    dist.barrier()  # every rank calls it; nobody continues until all have arrived
    waited = time.perf_counter() - start

    with open(path) as f:  # safe on every rank: rank 0 wrote the file before it reached the barrier
        text = f.read()
    report.put(f"rank {rank}: waited {'about 1 s' if waited > 0.8 else 'briefly'} at the barrier, read {text!r}")
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    with tempfile.TemporaryDirectory() as folder:
        mp.start_processes(worker, args=(free_port(), folder, report), nprocs=WORLD_SIZE, start_method="fork")
    for line in sorted(report.get() for _ in range(WORLD_SIZE)):
        print(line)
