"""all_gather with inputs that differ between ranks (gloo, 2 CPU processes): nothing compares them across ranks.

Run it with `python examples/dist_all_gather_mismatch.py`.
"""
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    """Ask the operating system for a TCP port that nothing is using."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, port, report, inputs):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    mine = inputs[rank]
    gathered = [torch.zeros_like(mine) for _ in range(2)]  # consistent with this rank's own input
    dist.all_gather(gathered, mine)
    report.put((rank, [t.tolist() for t in gathered]))
    dist.destroy_process_group()


def run(inputs):
    report = mp.get_context("fork").SimpleQueue()
    try:
        mp.start_processes(worker, args=(free_port(), report, inputs), nprocs=2, start_method="fork")
    except mp.ProcessExitedException as e:
        return f"process {e.error_index} killed by {e.signal_name}"
    return dict(sorted(report.get() for _ in range(2)))


if __name__ == "__main__":
    # Same number of bytes, other dtype: each rank reads the other's bits in its own dtype, and no error is raised.
    print("float32 and int32:", run([torch.ones(2), torch.ones(2, dtype=torch.int32)]))
    # Other sizes: the rank that receives more bytes than its buffer holds is aborted by gloo.
    print("2 and 3 elements: ", run([torch.ones(2), torch.ones(3)]))
