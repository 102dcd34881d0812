"""broadcast on 2 CPU processes (gloo): rank 0's tensor is copied into the same tensor on every rank.

Run it with `python examples/dist_broadcast.py`.
"""
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
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    lines = []

    # Every rank passes a tensor of the same shape and dtype; afterwards all hold the source's values.
    t = torch.tensor([1.0, 2.0]) if rank == 0 else torch.zeros(2)
    before = t.tolist()
    dist.broadcast(t, src=0)
    lines.append(f"broadcast from 0: {before} -> {t.tolist()}")

    # Same initial weights everywhere: each rank seeds differently here, then copies rank 0's parameters.
    torch.manual_seed(rank)
    model = torch.nn.Linear(2, 1)
    lines.append(f"weight before: {[round(v, 4) for v in model.weight.flatten().tolist()]}")
    with torch.no_grad():
        for p in model.parameters():
            dist.broadcast(p, src=0)
    lines.append(f"weight after:  {[round(v, 4) for v in model.weight.flatten().tolist()]}")

    # Python objects (a config decided on rank 0) go through broadcast_object_list, in place in the list.
    box = [{"lr": 0.1, "run": "exp-7"}] if rank == 0 else [None]
    dist.broadcast_object_list(box, src=0)
    lines.append(f"broadcast_object_list: {box[0]}")

    # The source can be any rank; async_op=True returns a handle to wait on.
    t = torch.full((1,), float(rank))
    dist.broadcast(t, src=1, async_op=True).wait()
    lines.append(f"broadcast from 1: {t.tolist()}")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
