"""broadcast into a parameter between forward and backward (gloo, 2 CPU processes): no error, a wrong gradient.

Run it with `python examples/dist_broadcast_autograd.py`.
"""
import socket
import warnings

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
    w = torch.nn.Parameter(torch.full((2,), float(rank + 1)))  # rank 0: [1, 1], rank 1: [2, 2]
    y = (w * w).sum()                                          # d y / d w = 2 * w
    dist.broadcast(w, src=0)                                   # a leaf that requires grad, no torch.no_grad()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.backward()
    names = sorted({type(m.message).__name__ for m in caught})
    report.put((rank, f"w = {w.tolist()}, grad = {w.grad.tolist()}, warnings: {names}"))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=2, start_method="fork")
    for rank, line in sorted(report.get() for _ in range(2)):
        print(f"rank {rank}: {line}")
