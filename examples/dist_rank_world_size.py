"""Who am I? get_rank, get_world_size and the environment torchrun gives each process (2 CPU processes, gloo).

Run it with `python examples/dist_rank_world_size.py`. Each worker sets the variables that
`torchrun --nproc-per-node=2` would set, then reads them back through torch.distributed.
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
    # What torchrun sets for every process it starts (one machine, two processes):
    os.environ.update({
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
        "RANK": str(rank), "WORLD_SIZE": str(WORLD_SIZE),            # global: across all machines
        "LOCAL_RANK": str(rank), "LOCAL_WORLD_SIZE": str(WORLD_SIZE),  # on this machine: pick the GPU with it
        "GROUP_RANK": "0",                                            # index of this machine
    })
    dist.init_process_group("gloo")  # env:// reads the variables above
    lines = [
        f"get_rank()={dist.get_rank()} get_world_size()={dist.get_world_size()} "
        f"LOCAL_RANK={os.environ['LOCAL_RANK']} get_node_local_rank()={dist.get_node_local_rank()}"
    ]

    # The usual use: split work by rank. Each rank takes every WORLD_SIZE-th item, starting at its rank.
    items = list(range(7))
    lines.append(f"my items: {items[dist.get_rank()::dist.get_world_size()]}")

    # In a subgroup, ranks are renumbered from 0; a process outside the group gets -1 from get_rank(group).
    odd = dist.new_group([1])
    lines.append(f"rank in group [1]: {dist.get_rank(odd)}")

    # Only rank 0 writes files / prints progress; everyone else waits at the barrier.
    if dist.get_rank() == 0:
        lines.append("rank 0 saves the checkpoint")
    dist.barrier()

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
