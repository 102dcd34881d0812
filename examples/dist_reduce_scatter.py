"""reduce_scatter on 2 CPU processes (gloo): reduce element-wise across ranks, and give each rank one piece.

Run it with `python examples/dist_reduce_scatter.py`.
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

    # input_list[i] is this rank's contribution to rank i's output.
    scale = float(rank + 1)                      # rank 0 contributes x1, rank 1 contributes x2
    inputs = [torch.tensor([1.0, 2.0]) * scale, torch.tensor([3.0, 4.0]) * scale]
    out = torch.empty(2)
    dist.reduce_scatter(out, inputs)             # default op: SUM
    lines.append(f"reduce_scatter: {[t.tolist() for t in inputs]} -> {out.tolist()}")

    # The same with one flat tensor: rank i receives the reduced i-th chunk along dim 0.
    flat = torch.arange(4.0) * scale
    out = torch.empty(2)
    dist.reduce_scatter_tensor(out, flat, op=dist.ReduceOp.MAX)
    lines.append(f"reduce_scatter_tensor (MAX): {flat.tolist()} -> {out.tolist()}")

    # reduce_scatter followed by all_gather is an all_reduce, in two halves: what FSDP does with gradients.
    grad = torch.tensor([1.0, 2.0, 3.0, 4.0]) * scale
    shard = torch.empty(2)
    dist.reduce_scatter_tensor(shard, grad)
    full = torch.empty(4)
    dist.all_gather_into_tensor(full, shard)
    reference = grad.clone()
    dist.all_reduce(reference)
    lines.append(f"my gradient shard {shard.tolist()}; all_gather of shards equals all_reduce: {torch.equal(full, reference)}")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
