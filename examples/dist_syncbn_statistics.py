"""What SyncBatchNorm synchronizes, on 2 CPU processes (gloo): batch statistics over all ranks' samples.

Run it with `python examples/dist_syncbn_statistics.py`. nn.SyncBatchNorm itself trains on GPUs only (it
all-gathers each rank's mean, inverse std and count and combines them); this script computes the same global
statistics by hand with all_reduce (sum, sum of squares and count over all ranks), and compares them with what a
plain BatchNorm on each rank uses: the statistics of its own small batch.
"""
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

WORLD_SIZE = 2


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, report):
    # A forked child must not use the parent's OpenMP thread pool (it can hang): compute on one thread.
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    # 4 samples of one channel per rank; the ranks' data differ (rank 1's values are 10 larger).
    x = torch.tensor([[1.0], [2.0], [3.0], [4.0]]) + 10 * rank

    local_bn = nn.BatchNorm1d(1, momentum=1.0)   # momentum=1: running stats = the last batch's stats
    local_bn(x)
    lines = [f"plain BatchNorm: mean {local_bn.running_mean.item():.2f}, var {local_bn.running_var.item():.2f}"]

    # The global statistics SyncBatchNorm normalizes with, from per-channel sums, sums of squares and counts.
    stats = torch.stack([x.sum(0), (x * x).sum(0), torch.tensor([float(x.shape[0])])])
    dist.all_reduce(stats)
    total, total_sq, count = stats[0], stats[1], stats[2]
    mean = total / count
    var = total_sq / count - mean ** 2                  # biased variance, used to normalize
    unbiased = var * count / (count - 1)                # what goes into running_var
    normalized = (x - mean) / torch.sqrt(var + 1e-5)
    lines.append(f"synchronized:    mean {mean.item():.2f}, var {unbiased.item():.2f} over {int(count.item())} samples")
    lines.append(f"normalized batch: {[round(v, 3) for v in normalized.flatten().tolist()]}")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
