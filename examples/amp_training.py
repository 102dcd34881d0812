"""Mixed-precision training: bfloat16 autocast on the CPU (runs everywhere), float16 + GradScaler on CUDA."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_problem(device):
    """256 samples with 32 features, 4 classes; the same data on every device."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 32, generator=g)
    y = (x @ torch.randn(32, 4, generator=g)).argmax(dim=1)
    return x.to(device), y.to(device)


def train(device, amp_dtype, steps=40):
    """Train from the same start; amp_dtype None means plain float32."""
    x, y = make_problem(device)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    # Loss scaling is needed for float16 only; with enabled=False every scaler call is a pass-through.
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
            logits = model(x)                      # linear layers run in amp_dtype
            loss = F.cross_entropy(logits, y)      # the loss is computed in float32
        scaler.scale(loss).backward()              # backward outside the autocast block
        scaler.unscale_(optimizer)                 # true gradients, for clipping
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)                     # skipped if a gradient is inf/NaN
        scaler.update()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad(), torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
        accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    weight = model[0].weight
    return {
        "dtypes": f"logits {logits.dtype}, loss {loss.dtype}, weights {weight.dtype}, grads {weight.grad.dtype}",
        "losses": losses,
        "accuracy": accuracy,
        "scale": scaler.get_scale(),
    }


def report(name, result):
    losses = result["losses"]
    print(f"{name}: {result['dtypes']}")
    print(f"{name}: loss {losses[0]:.4f} -> {losses[-1]:.4f}, accuracy {result['accuracy']:.3f}, "
          f"loss scale {result['scale']}")
    return losses[-1]


cpu = torch.device("cpu")
fp32 = report("cpu float32 ", train(cpu, None))
bf16 = report("cpu bfloat16", train(cpu, torch.bfloat16))
print(f"final losses within 0.01 of each other: {abs(bf16 - fp32) < 0.01}")

if torch.cuda.is_available():
    cuda = torch.device("cuda")
    fp32_gpu = report("cuda float32", train(cuda, None))
    fp16_gpu = report("cuda float16", train(cuda, torch.float16))
    print(f"final CUDA losses within 0.01 of each other: {abs(fp16_gpu - fp32_gpu) < 0.01}")
else:
    print("CUDA is not available: the float16 + GradScaler run was skipped")
