"""FSDP2 (fully_shard) on 2 CPU processes (gloo): each rank stores half of every parameter.

Run it with `python examples/dist_fully_shard.py`. The same model is trained for 3 steps with fully_shard and,
for reference, as a plain single-process model on the full batch; the losses and the final weights agree.
"""
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.distributed.fsdp import fully_shard

WORLD_SIZE = 2


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_model():
    torch.manual_seed(0)  # the same initial weights on every rank (fully_shard does not broadcast them)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def data():
    torch.manual_seed(1)
    return torch.randn(6, 4), torch.randn(6, 2)


def train(model, x, y, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 4))
    return losses


def worker(rank, port, report):
    # A forked worker must not use the OpenMP threads of a parent that already ran multi-threaded ops (GNU OpenMP
    # is not fork-safe: the child can abort); one thread per worker is also what torchrun sets by default.
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    lines = []

    # fully_shard keeps the rows each rank already has: it does not broadcast rank 0's weights.
    torch.manual_seed(rank)                  # a mistake on purpose: another seed on each rank
    odd = fully_shard(nn.Linear(4, 8))
    full_odd = odd.weight.full_tensor()      # a collective: every rank calls it
    torch.manual_seed(0)
    rank0_init = nn.Linear(4, 8).weight
    lines.append(f"seeded per rank: rows 0-3 are rank 0's {torch.equal(full_odd[:4], rank0_init[:4])}, "
                 f"rows 4-7 are rank 0's {torch.equal(full_odd[4:], rank0_init[4:])}")

    model = make_model()
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)   # each layer its own unit: its weights are gathered just before it runs
    fully_shard(model)           # the root: what is left (nothing here) and the hooks around forward/backward

    w = model[0].weight
    lines.append(f"{type(model).__name__}; weight is a {type(w).__name__}: global {tuple(w.shape)}, "
                 f"local shard {tuple(w.to_local().shape)}")

    # Data parallel: every rank trains on its own half of the batch; gradients are reduce-scattered.
    x, y = data()
    half = slice(rank * 3, rank * 3 + 3)
    lines.append(f"losses on my half: {train(model, x[half], y[half])}")

    # full_tensor() all-gathers a sharded parameter (a collective: every rank must call it).
    full = model[0].weight.full_tensor()
    reference = make_model()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(3):
        ref_opt.zero_grad()
        # the mean of the two half-batch losses = the loss over the full batch, as FSDP averages gradients
        nn.functional.mse_loss(reference(x), y).backward()
        ref_opt.step()
    lines.append(f"full weight equals a single-process run on the whole batch: "
                 f"{torch.allclose(full, reference[0].weight, atol=1e-6)}")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
