"""Time all_reduce on 2 CPU processes (gloo): 100 one-element tensors one by one, versus one 100-element tensor.

Run it with `python examples/dist_all_reduce_timing.py`. The timings depend on the machine.
"""
import socket
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2
N = 100


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fns, rounds=5):
    """Median wall time of each fn() in milliseconds, in interleaved rounds; a barrier before each call."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, t in zip(fns, times):
            dist.barrier()  # both ranks start together
            start = time.perf_counter()
            fn()
            t.append((time.perf_counter() - start) * 1e3)
    return [sorted(t)[len(t) // 2] for t in times]


def worker(rank, port, report):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    small = [torch.ones(1) for _ in range(N)]
    packed = torch.ones(N)

    def one_by_one():
        for t in small:
            dist.all_reduce(t)

    def all_at_once():
        dist.all_reduce(packed)

    one_by_one(), all_at_once()  # warm-up: the first calls set up connections
    result = timed([one_by_one, all_at_once])
    if rank == 0:
        report.put(result)
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    separate, packed = report.get()
    print(f"{N} all_reduce calls of 1 element: {separate:.2f} ms")
    print(f"1 all_reduce call of {N} elements: {packed:.2f} ms")
