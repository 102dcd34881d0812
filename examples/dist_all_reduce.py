"""all_reduce on 2 CPU processes (gloo backend): every rank ends up with the same combined tensor.

Run it with `python examples/dist_all_reduce.py`.
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

    # Each rank starts with different values: rank 0 has [1, 10], rank 1 has [2, 20].
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.AVG):
        t = torch.tensor([1.0, 10.0]) * (rank + 1)
        before = t.tolist()
        result = dist.all_reduce(t, op=op)  # in place: t is overwritten, the return value is None
        lines.append(f"{str(op).split('.')[-1]:4s} {before} -> {t.tolist()}  (returned {result})")

    # async_op=True returns a handle at once; the tensor holds the result only after wait().
    t = torch.tensor([float(rank)])
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    lines.append(f"async: {t.tolist()}")

    # The usual use: average gradients (or metrics) over all ranks = SUM, then divide by the world size.
    grad = torch.tensor([0.5, -1.0]) * (rank + 1)
    dist.all_reduce(grad)
    grad /= dist.get_world_size()
    lines.append(f"mean gradient: {grad.tolist()}")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
