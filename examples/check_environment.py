"""Check a PyTorch installation: versions, the CUDA build and GPU, CPU threads and the default dtype.

Run it with the Python of the environment you want to check:  python check_environment.py
"""
import os

import torch
import torchvision

# Versions. The part after "+" (when there is one) names the build variant: +cu130 = CUDA 13.0, +cpu = CPU only.
print("torch:", torch.__version__)
print("torchvision:", torchvision.__version__)
print("built with CUDA:", torch.version.cuda)  # None for a CPU-only build

# GPU. is_available() never raises: it answers False when there is no usable GPU.
if torch.cuda.is_available():
    device = torch.device("cuda")
    print("CUDA available: True")
else:
    device = torch.device("cpu")
    print("CUDA available: False")
    if torch.version.cuda is None:
        print("  - this is a CPU-only build: install a CUDA build (see pytorch.org/get-started/locally)")
    else:
        print(f"  - this build supports CUDA {torch.version.cuda}, but no GPU is usable")
        hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
        if hidden is not None:
            print(f"  - CUDA_VISIBLE_DEVICES={hidden!r} limits the GPUs this process may see ('' hides all of them)")
        print(f"  - run nvidia-smi: it must list a GPU, and its 'CUDA Version' must be {torch.version.cuda} or higher")
    print("  - everything still runs on the CPU, only slower")
print("Apple MPS available:", torch.backends.mps.is_available())

# A small computation on the chosen device: x @ I must give x back.
x = torch.randn(64, 64, device=device)
ok = torch.allclose(x @ torch.eye(64, device=device), x)
print(f"matrix product on {device.type}: {'ok' if ok else 'WRONG'}")

# CPU threads. One operation uses up to get_num_threads() threads (by default usually one per physical core).
# Lower it when several processes share a machine (parallel jobs, several runs on one server).
default_threads = torch.get_num_threads()
torch.set_num_threads(1)
print("threads after torch.set_num_threads(1):", torch.get_num_threads())
torch.set_num_threads(default_threads)
print("threads restored:", torch.get_num_threads() == default_threads)

# Default dtype: what Python floats become. Integers always become int64.
print("default dtype:", torch.get_default_dtype())
print("torch.tensor([1.0]).dtype:", torch.tensor([1.0]).dtype)
print("torch.tensor([1]).dtype:", torch.tensor([1]).dtype)
print("device to use:", device)
