"""Time all_gather_into_tensor, all_gather and all_gather_object for the same 100,000 floats (2 CPU processes, gloo).

Run it with `python examples/dist_all_gather_timing.py`. Prints the median of 11 interleaved rounds of each, measured on rank 0.
"""
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2
N = 100_000


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def median_ms(fns, rounds=11):
    """Median time of each function, in interleaved rounds: no variant always runs first."""
    for fn in fns.values():
        fn()  # warm-up: the first call sets up buffers
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            dist.barrier()  # start together, so that one rank's lateness is not counted
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def worker(rank, port, report):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    mine = torch.randn(N)
    out = torch.empty(WORLD_SIZE * N)
    pieces = [torch.empty(N) for _ in range(WORLD_SIZE)]
    objects = [None] * WORLD_SIZE
    results = median_ms({
        "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(out, mine),
        "all_gather (list)": lambda: dist.all_gather(pieces, mine),
        "all_gather_object": lambda: dist.all_gather_object(objects, mine),
    })
    if rank == 0:
        report.put("\n".join(f"{name:23s} {ms:7.2f} ms" for name, ms in results.items()))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    print(report.get())
