"""Start 2 processes on this machine and join them into one process group (gloo backend, CPU only).

Run it with `python examples/dist_init_process_group.py`. Each worker process sets the variables that
`torchrun` would set for it, then calls `init_process_group` with the default `env://` method.
"""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, report):
    # What torchrun sets in the environment of every process it starts:
    os.environ["MASTER_ADDR"] = "127.0.0.1"  # where rank 0 listens
    os.environ["MASTER_PORT"] = str(port)
    os.environ["RANK"] = str(rank)  # this process: 0 ... WORLD_SIZE - 1
    os.environ["WORLD_SIZE"] = str(WORLD_SIZE)  # how many processes in total

    dist.init_process_group(backend="gloo")  # blocks until all WORLD_SIZE processes have joined

    ranks = torch.tensor([dist.get_rank()])
    dist.all_reduce(ranks)  # every process contributes its rank: 0 + 1
    report.put(
        f"rank {dist.get_rank()} of {dist.get_world_size()}: backend={dist.get_backend()}, "
        f"sum of all ranks={ranks.item()}"
    )
    dist.destroy_process_group()  # leave cleanly


if __name__ == "__main__":
    # The workers send their lines back through a queue and this process prints them in rank order:
    # two processes printing at the same time would mix their lines unpredictably.
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for line in sorted(report.get() for _ in range(WORLD_SIZE)):
        print(line)
