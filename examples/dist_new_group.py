"""new_group on 4 CPU processes (gloo): collectives over a subset of the ranks.

Run it with `python examples/dist_new_group.py`. Four processes form two pairs, [0, 1] and [2, 3]; each pair
all-reduces on its own, and the world group still reaches all four.
"""
import socket
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 4


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, report):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD_SIZE)
    lines = []

    # Every rank must call new_group for every group, in the same order, even for groups it is not in.
    pairs = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    my_pair = pairs[rank // 2]

    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=my_pair)                  # 0+1 in the first pair, 2+3 in the second
    lines.append(f"sum in my pair: {t.item()}, rank in pair {dist.get_rank(my_pair)} of {dist.get_world_size(my_pair)}")

    # A process not in a group gets -1 from get_rank(group); a collective on that group does nothing, with a warning.
    other = pairs[1 - rank // 2]
    lines.append(f"get_rank(other pair) = {dist.get_rank(other)}")
    u = torch.ones(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist.all_reduce(u, group=other)
    lines.append(f"all_reduce on the other pair: {u.item()} (unchanged), {caught[0].category.__name__}")

    # Collectives with group=... take global ranks for src/dst; group_src takes the rank inside the group.
    b = torch.tensor([float(rank * 10)])
    dist.broadcast(b, group_src=1, group=my_pair)      # the second member of each pair: global 1 and 3
    lines.append(f"broadcast from my pair's member 1: {b.item()}")

    # new_subgroups splits the world into equal consecutive groups in one call.
    sub, _ = dist.new_subgroups(group_size=2)
    lines.append(f"new_subgroups: rank {dist.get_rank(sub)} of {dist.get_world_size(sub)}")

    total = torch.tensor([1.0])
    dist.all_reduce(total)                             # the default (world) group is unchanged
    lines.append(f"world sum: {total.item()}")

    report.put((rank, lines))
    dist.destroy_process_group()


if __name__ == "__main__":
    report = mp.get_context("fork").SimpleQueue()
    mp.start_processes(worker, args=(free_port(), report), nprocs=WORLD_SIZE, start_method="fork")
    for rank, lines in sorted(report.get() for _ in range(WORLD_SIZE)):
        for line in lines:
            print(f"rank {rank}: {line}")
