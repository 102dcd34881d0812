"""Train a tiny regression model with DistributedDataParallel on 2 CPU processes (gloo backend).

Two ways to run it:

    torchrun --nproc-per-node=2 examples/ddp_train.py   # torchrun starts the processes and sets their environment
    python examples/ddp_train.py                        # the script starts 2 processes itself, the same way

Rank 0 reports the loss of every epoch, averaged over all ranks, and saves the model to ddp_model.pt.
"""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_dataset():
    """64 samples of y = x @ w + noise; the same on every rank (a fixed generator seed)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1 * torch.randn(64, 1, generator=g)
    return TensorDataset(x, y)


def train(log=print):
    # torchrun (or start_workers below) sets these for every process.
    rank = int(os.environ["RANK"])  # 0 ... WORLD_SIZE-1, unique over all machines
    local_rank = int(os.environ["LOCAL_RANK"])  # 0 ... processes per machine - 1: which GPU to use
    world_size = int(os.environ["WORLD_SIZE"])

    # On GPUs: device = torch.device("cuda", local_rank); torch.cuda.set_device(device); backend "nccl".
    device = torch.device("cpu")
    dist.init_process_group("gloo")  # env:// : MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the environment

    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 1).to(device))  # on GPUs: DDP(model, device_ids=[local_rank])

    dataset = make_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=0)  # rank and world size come from the process group
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)  # no shuffle=True here: the sampler shuffles
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    for epoch in range(4):
        sampler.set_epoch(epoch)  # a new order every epoch, the same split on every rank
        stats = torch.zeros(2)  # [sum of losses, number of samples] on this rank
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()  # DDP averages the gradients over all ranks here
            optimizer.step()
            stats += torch.tensor([loss.item() * len(x), len(x)])
        dist.all_reduce(stats)  # add up the losses and counts of all ranks
        if rank == 0:
            log(
                f"epoch {epoch}: mean loss {stats[0] / stats[1]:.4f} over {int(stats[1])} samples "
                f"({len(loader)} batches on each of {world_size} ranks)"
            )

    if rank == 0:
        torch.save(model.module.state_dict(), "ddp_model.pt")  # .module: the plain model, without "module." keys
    dist.barrier()  # the other ranks wait until the file is written
    state = torch.load("ddp_model.pt")
    same = torch.tensor([int(torch.equal(state["weight"], model.module.weight.detach()))])
    dist.all_reduce(same, op=dist.ReduceOp.MIN)  # stays 1 only if it is 1 on every rank
    if rank == 0:
        log(f"every rank loaded ddp_model.pt and found its own weights in it: {bool(same)}")
    dist.destroy_process_group()


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_as_rank(rank, world_size, port, lines):
    """One worker process started by start_workers: set the variables torchrun would set, then train."""
    os.environ.update(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world_size), RANK=str(rank), LOCAL_RANK=str(rank)
    )
    train(log=lines.put)


def start_workers(world_size=2):
    """torchrun in miniature, on one machine: start one process per rank and print what they report."""
    lines = mp.get_context("fork").SimpleQueue()  # workers send their lines here; this process prints them
    mp.start_processes(run_as_rank, args=(world_size, free_port(), lines), nprocs=world_size, start_method="fork")
    while not lines.empty():
        print(lines.get())


if __name__ == "__main__":
    if "LOCAL_RANK" in os.environ:  # started by torchrun: this process is one of the workers
        train()
    else:  # started with plain `python`: start the workers here
        start_workers()
