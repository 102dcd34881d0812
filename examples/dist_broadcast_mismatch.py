"""broadcast checks nothing about the receiver's buffer (gloo, 2 CPU processes): it copies the source's bytes.

Run it with `python examples/dist_broadcast_mismatch.py`.
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


def worker(rank, port, report, receiver):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    t = torch.tensor([1.0, 2.0]) if rank == 0 else receiver.clone()
    dist.broadcast(t, src=0)
    if rank == 1:
        report.put(f"{t.tolist()} {t.dtype}")
    dist.destroy_process_group()


def run(receiver):
    """Broadcast float32 [1.0, 2.0] from rank 0 into `receiver` on rank 1."""
    report = mp.get_context("fork").SimpleQueue()
    try:
        mp.start_processes(worker, args=(free_port(), report, receiver), nprocs=2, start_method="fork")
    except mp.ProcessExitedException as e:
        return f"process {e.error_index} killed by {e.signal_name}"
    return report.get()


if __name__ == "__main__":
    print("int32 receiver:  ", run(torch.zeros(2, dtype=torch.int32)))  # the float bits, read as integers
    print("float64 receiver:", run(torch.zeros(2, dtype=torch.float64)))
    print("3-element buffer:", run(torch.zeros(3)))                      # the last element is left as it was
    print("1-element buffer:", run(torch.zeros(1)))                      # too small: gloo aborts the receiver
