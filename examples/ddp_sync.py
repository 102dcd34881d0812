"""What DistributedDataParallel keeps in sync, on 2 CPU processes (gloo backend).

Run it with `python examples/ddp_sync.py`. Each rank builds its model from a different seed and trains on
different data; DDP makes the starting weights, the gradients and therefore the updated weights identical.
"""
import copy
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD_SIZE = 2


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, report):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    lines = []

    torch.manual_seed(rank)  # a different seed on each rank: different initial weights
    model = nn.Linear(3, 1)
    lines.append(f"weight before DDP: {model.weight.sum().item():+.4f}")
    ddp = DDP(model)  # broadcasts rank 0's parameters and buffers to every rank
    lines.append(f"weight after DDP:  {model.weight.sum().item():+.4f}")

    # Different data on each rank, as a DistributedSampler would give.
    torch.manual_seed(100 + rank)
    x, y = torch.randn(4, 3), torch.randn(4, 1)

    # The gradient this rank alone would compute, with a plain copy of the same weights:
    local = copy.deepcopy(model)
    nn.functional.mse_loss(local(x), y).backward()
    mean_of_local = local.weight.grad.clone()
    dist.all_reduce(mean_of_local)
    mean_of_local /= WORLD_SIZE

    nn.functional.mse_loss(ddp(x), y).backward()  # DDP all-reduces the gradients during backward
    lines.append(f"DDP gradient == mean of the ranks' local gradients: {torch.allclose(model.weight.grad, mean_of_local)}")

    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    optimizer.step()
    lines.append(f"weight after one step: {model.weight.sum().item():+.4f}")

    # Gradient accumulation: inside no_sync() the gradients stay local (no communication).
    optimizer.zero_grad()
    with ddp.no_sync():
        nn.functional.mse_loss(ddp(x), y).backward()
    lines.append(f"gradient after no_sync backward: {model.weight.grad.sum().item():+.4f} (local)")
    nn.functional.mse_loss(ddp(x), y).backward()  # this backward synchronizes the accumulated sum
    lines.append(f"gradient after synced backward:  {model.weight.grad.sum().item():+.4f} (same on all ranks)")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
