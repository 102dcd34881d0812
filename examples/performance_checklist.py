"""The performance checklist, measured on the CPU: one line per item, medians from torch.utils.benchmark.Timer.

Sizes are tiny so that the whole script finishes in well under two minutes on a small, busy machine.
GPU-only items (pinned-memory copies, float16 + GradScaler, cudnn.benchmark) are measured on the guide's CUDA pass.
"""
import time

import torch
from torch import nn
from torch.utils.benchmark import Timer
from torch.utils.data import DataLoader, Dataset

cpu = torch.device("cpu")


def median_ms(fn):
    """Median time of one call of fn, in milliseconds."""
    return Timer("fn()", globals={"fn": fn}).blocked_autorange(min_run_time=0.2).median * 1e3


# 1. DataLoader workers: each sample "reads" for 20 ms; workers overlap those waits.
class SlowDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        time.sleep(0.02)            # stands for reading and decoding a file
        return torch.full((3,), float(i))


epoch_s = {}
for workers in (0, 2):
    loader = DataLoader(SlowDataset(), batch_size=4, num_workers=workers)
    start = time.perf_counter()
    for batch in loader:
        pass
    epoch_s[workers] = time.perf_counter() - start
print(f"DataLoader: one epoch with num_workers=0 {epoch_s[0]:.2f} s, with num_workers=2 {epoch_s[2]:.2f} s")

# pin_memory only speeds up copies to a GPU; without one there is nothing to measure.
print(f"pin_memory: GPU available: {torch.cuda.is_available()}; the CPU pass measures nothing for it")

# 2. bfloat16 autocast on the CPU: pays off only with bfloat16 instructions (AVX-512 BF16, AMX).
mlp = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).to(cpu)
x = torch.randn(128, 256, device=cpu)


def fp32():
    with torch.no_grad():
        return mlp(x)


def autocast_bf16():
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        return mlp(x)


print(f"autocast bfloat16 (CPU capability {torch.backends.cpu.get_cpu_capability()}): "
      f"float32 median {median_ms(fp32):.2f} ms, autocast median {median_ms(autocast_bf16):.2f} ms")

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
print(f"channels_last: same result {same}, NCHW median {median_ms(nchw):.2f} ms, "
      f"NHWC median {median_ms(nhwc):.2f} ms")

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
print(f"torch.compile: first call (compiles) {first_call_s:.1f} s, same result {same}, "
      f"eager median {median_ms(eager):.3f} ms, compiled median {median_ms(compiled):.3f} ms")
