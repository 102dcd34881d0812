"""A collective waits for every rank by itself (gloo, 2 CPU processes): no barrier is needed in front of it.

Run it with `python examples/dist_collective_waits.py`.
"""
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, report):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    if rank == 0:
        time.sleep(1.0)  # rank 0 is busy; rank 1 goes straight to the all_reduce
    start = time.perf_counter()
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    waited = time.perf_counter() - start
    report.put((rank, f"all_reduce -> {t.item()}, waited {'about 1 s' if waited > 0.8 else 'briefly'}"))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=2, start_method="fork")
    for rank, line in sorted(report.get() for _ in range(2)):
        print(f"rank {rank}: {line}")
