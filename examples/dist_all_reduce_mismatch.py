"""all_reduce when the ranks pass different dtypes (gloo, 2 CPU processes): wrong numbers, no error.

Run it with `python examples/dist_all_reduce_mismatch.py`.
"""
import socket

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
    t = torch.ones(2) if rank == 0 else torch.ones(2, dtype=torch.int32)  # rank 1 forgot a .float()
    dist.all_reduce(t)                                                    # the sum should be 2 everywhere
    report.put((rank, f"{t.tolist()} {t.dtype}"))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=2, start_method="fork")
    for rank, line in sorted(report.get() for _ in range(2)):
        print(f"rank {rank}: {line}")
