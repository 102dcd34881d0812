"""A barrier that only one of 2 ranks reaches: it waits until its timeout, then raises.

Run it with `python examples/dist_barrier_timeout.py`.
"""
import socket
from datetime import timedelta

import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, report, rank0_done):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)

    if rank == 0:  # BUG: the barrier is inside a rank-dependent branch, so rank 1 never calls it
        try:
            dist.barrier(timeout=timedelta(seconds=2))  # the default timeout would be 30 minutes
            report.put("rank 0: passed the barrier")
        except RuntimeError as e:
            report.put(f"rank 0: {type(e).__name__}, timed out: {'Timed out' in str(e)}")
        rank0_done.set()
    else:
        rank0_done.wait()  # rank 1 carries on with other work (here: it waits until rank 0 gave up)
        report.put("rank 1: never called barrier()")

    dist.destroy_process_group()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    report, rank0_done = ctx.SimpleQueue(), ctx.Event()
    mp.start_processes(worker, args=(free_port(), report, rank0_done), nprocs=WORLD_SIZE, start_method="fork")
    for line in sorted(report.get() for _ in range(WORLD_SIZE)):
        print(line)
