"""all_gather on 2 CPU processes (gloo): every rank receives every rank's tensor.

Run it with `python examples/dist_all_gather.py`.
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

    # A list of world_size tensors to receive into, each of the input's shape and dtype.
    mine = torch.tensor([10.0, 11.0]) * (rank + 1)
    gathered = [torch.empty_like(mine) for _ in range(WORLD_SIZE)]
    dist.all_gather(gathered, mine)
    lines.append(f"all_gather: {[t.tolist() for t in gathered]}")

    # all_gather_into_tensor writes into one tensor of world_size * the input's size along dim 0.
    out = torch.empty(WORLD_SIZE * 2)
    dist.all_gather_into_tensor(out, mine)
    lines.append(f"all_gather_into_tensor: {out.tolist()}")

    # Evaluation: gather every rank's predictions to compute one metric over the whole data set.
    preds = torch.tensor([1, 0, 1]) if rank == 0 else torch.tensor([1, 1, 0])
    labels = torch.tensor([1, 0, 0]) if rank == 0 else torch.tensor([1, 1, 1])
    all_preds = [torch.empty_like(preds) for _ in range(WORLD_SIZE)]
    all_labels = [torch.empty_like(labels) for _ in range(WORLD_SIZE)]
    dist.all_gather(all_preds, preds)
    dist.all_gather(all_labels, labels)
    accuracy = (torch.cat(all_preds) == torch.cat(all_labels)).float().mean()
    lines.append(f"accuracy over both ranks: {accuracy:.4f}")

    # Different sizes per rank: gather the sizes first, pad to the largest, gather, then cut.
    local = torch.arange(rank + 2, dtype=torch.float32)          # rank 0 has 2 values, rank 1 has 3
    sizes = [torch.empty(1, dtype=torch.int64) for _ in range(WORLD_SIZE)]
    dist.all_gather(sizes, torch.tensor([local.numel()]))
    longest = max(int(s) for s in sizes)
    padded = torch.cat([local, local.new_zeros(longest - local.numel())])
    slots = [torch.empty(longest) for _ in range(WORLD_SIZE)]
    dist.all_gather(slots, padded)
    lines.append(f"uneven, padded and cut: {[t[: int(n)].tolist() for t, n in zip(slots, sizes)]}")

    # Arbitrary picklable objects (slower: pickled, sent as bytes).
    objects = [None] * WORLD_SIZE
    dist.all_gather_object(objects, {"rank": rank, "files": [f"part-{rank}.txt"]})
    lines.append(f"all_gather_object: {objects}")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
