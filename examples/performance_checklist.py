"""The performance checklist, measured on the CPU: one line per item, medians from torch.utils.benchmark.Timer.

Sizes are tiny so that the whole script finishes in well under two minutes on a small, busy machine.
GPU-only items (pinned-memory copies, float16 + GradScaler, cudnn.benchmark) are measured on the guide's CUDA pass;
bfloat16 autocast is measured in its own block of the guide, because its direction depends on the CPU.
"""
import time

import torch
from torch import nn
from torch.utils.benchmark import Timer
from torch.utils.data import DataLoader, Dataset

cpu = torch.device("cpu")


def medians(fns, unit=1e3):
    """Median of five interleaved rounds of Timer.blocked_autorange per function (neither always runs first)."""
    timers = {k: Timer("fn()", globals={"fn": fn}) for k, fn in fns.items()}
    runs = {k: [] for k in fns}
    for _ in range(5):
        for k, t in timers.items():
            runs[k].append(t.blocked_autorange(min_run_time=0.05).median * unit)
    return {k: sorted(v)[len(v) // 2] for k, v in runs.items()}


# 1. DataLoader workers: each sample "reads" for 20 ms; workers overlap those waits.
class SlowDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        time.sleep(0.02)            # stands for reading and decoding a file
        return torch.full((3,), float(i))


def epoch_of(loader):
    def epoch():
        for batch in loader:
            pass
    return epoch


loaders = {
    "0 workers": DataLoader(SlowDataset(), batch_size=4, num_workers=0),
    "2 workers": DataLoader(SlowDataset(), batch_size=4, num_workers=2),
    "2 persistent": DataLoader(SlowDataset(), batch_size=4, num_workers=2, persistent_workers=True),
}
epoch_s = medians({k: epoch_of(loader) for k, loader in loaders.items()}, unit=1)
print("DataLoader, one epoch:", ", ".join(f"{k} {v:.2f} s" for k, v in epoch_s.items()))

# pin_memory only matters for copies to a GPU; without one there is nothing to measure.
print(f"pin_memory: GPU available: {torch.cuda.is_available()}; the CPU pass measures nothing for it")

# 2. bfloat16 autocast on the CPU: the functions; the guide times them in a block of its own.
mlp = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).to(cpu)
x = torch.randn(128, 256, device=cpu)


def fp32():
    with torch.no_grad():
        return mlp(x)


def autocast_bf16():
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        return mlp(x)


# 3. channels_last: the same convolutions on NCHW and on NHWC (channels_last) tensors.
convs = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1)).to(cpu)
images = torch.randn(4, 16, 32, 32, device=cpu)
convs_cl = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1)).to(cpu)
convs_cl.load_state_dict(convs.state_dict())
convs_cl = convs_cl.to(memory_format=torch.channels_last)
images_cl = images.contiguous(memory_format=torch.channels_last)


def nchw():
    with torch.no_grad():
        return convs(images)


def nhwc():
    with torch.no_grad():
        return convs_cl(images_cl)


same = torch.allclose(nchw(), nhwc(), rtol=1e-4, atol=1e-4)
layout_ms = medians({"NCHW": nchw, "NHWC": nhwc})
print(f"channels_last: same result {same}, NCHW median {layout_ms['NCHW']:.2f} ms, "
      f"NHWC median {layout_ms['NHWC']:.2f} ms")

# 4. torch.compile: the first call compiles; later calls are faster only if there is something to fuse.
block = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 128), nn.LayerNorm(128)).to(cpu)
inp = torch.randn(32, 128, device=cpu)
compiled_block = torch.compile(block)

start = time.perf_counter()
with torch.no_grad():
    compiled_block(inp)
first_call_s = time.perf_counter() - start


def eager():
    with torch.no_grad():
        return block(inp)


def compiled():
    with torch.no_grad():
        return compiled_block(inp)


same = torch.allclose(eager(), compiled(), atol=1e-5)
compile_ms = medians({"eager": eager, "compiled": compiled})
print(f"torch.compile: first call (compiles) {first_call_s:.1f} s, same result {same}, "
      f"eager median {compile_ms['eager']:.3f} ms, compiled median {compile_ms['compiled']:.3f} ms")
