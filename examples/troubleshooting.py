"""Reproduce common training problems on a tiny scale, detect them, and fix them.

Runs in a few seconds on a CPU; on a machine with a GPU it uses the GPU and prints the same results.
"""
import warnings

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def section(title):
    print(f"\n== {title} ==")


# ---------------------------------------------------------------------------------------------
section("1. NaN loss from a learning rate that is too large")

torch.manual_seed(0)
x = torch.randn(64, 3, device=device) * 10  # features with a large scale
y = x @ torch.tensor([[2.0], [-1.0], [0.5]], device=device) + 0.1 * torch.randn(64, 1, device=device)


def train(inputs, lr, steps=50, clip=None):
    """Plain SGD on a linear model; stops at the first loss that is not finite."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(steps):
        loss = F.mse_loss(model(inputs), y)
        if not torch.isfinite(loss):  # detect: inf or nan
            return f"loss became {loss.item()} at step {step}"
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip)
        opt.step()
    return f"final loss {loss.item():.4f}"


print("lr=0.1:                 ", train(x, lr=0.1))
print("fix: lr=0.001:          ", train(x, lr=0.001))
print("fix: clip grad norm 1.0:", train(x, lr=0.1, clip=1.0))
x_normalized = (x - x.mean(dim=0)) / x.std(dim=0)
print("fix: normalized inputs: ", train(x_normalized, lr=0.1))

# ---------------------------------------------------------------------------------------------
section("2. NaN loss from log(0)")

p = torch.tensor([0.0, 0.5, 1.0], device=device, requires_grad=True)  # predicted probabilities
target = torch.tensor([0.0, 1.0, 1.0], device=device)


def handmade_bce(p):
    return -(target * torch.log(p) + (1 - target) * torch.log(1 - p)).mean()


loss = handmade_bce(p)
print("loss:", loss.item(), "| finite:", torch.isfinite(loss).item())  # 0 * log(0) = 0 * -inf = nan

# Anomaly mode names the backward function that produced the NaN, and warns with the forward line.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        with torch.autograd.detect_anomaly():
            handmade_bce(p).backward()
    except RuntimeError as err:
        print("anomaly mode:", err)
for w in caught:
    first_line = str(w.message).splitlines()[0]
    if first_line.startswith("Error detected"):
        print("warning:     ", first_line)

print("fix: F.binary_cross_entropy:", round(F.binary_cross_entropy(p, target).item(), 4))
logits = torch.tensor([-30.0, 0.0, 30.0], device=device)  # better: keep logits, never take log of 0
print("fix: BCE with logits:       ", round(F.binary_cross_entropy_with_logits(logits, target).item(), 4))

# ---------------------------------------------------------------------------------------------
section("3. Forgetting model.eval()")

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2)).to(device)
for _ in range(20):  # some training-mode forward passes update BatchNorm's running statistics
    model(torch.randn(32, 4, device=device) * 3 + 1)
samples = torch.randn(8, 4, device=device)

print("train mode, same input twice, same output:", torch.equal(model(samples), model(samples)))
try:
    model(samples[:1])  # BatchNorm in training mode needs more than one sample
except ValueError as err:
    print("train mode, batch of one:", err)

model.eval()
with torch.no_grad():
    out = model(samples)
    print("eval mode, same input twice, same output: ", torch.equal(out, model(samples)))
    print("eval mode, sample 0 alone = in the batch: ", torch.allclose(model(samples[:1]), out[:1], atol=1e-6))


def evaluate(model):
    model.eval()
    with torch.no_grad():
        return model(samples).argmax(dim=1)


evaluate(model)
print("after evaluate(): model.training =", model.training, "-> call model.train() before training again")
model.train()
print("after model.train(): model.training =", model.training)

# ---------------------------------------------------------------------------------------------
section("4. Tensors on different devices")

net = nn.Linear(4, 2).to(device)
batch = torch.randn(3, 4)  # made on the CPU, as a DataLoader does
net_device = next(net.parameters()).device
out = net(batch.to(net_device))  # fix: move the inputs to the model's device
print("output on the model's device:", out.device == net_device)

# ---------------------------------------------------------------------------------------------
section("5. Out of memory: the error type and a memory estimate")

print("torch.cuda.OutOfMemoryError is torch.OutOfMemoryError:", torch.cuda.OutOfMemoryError is torch.OutOfMemoryError)
print("subclass of RuntimeError:", issubclass(torch.OutOfMemoryError, RuntimeError))

big = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1024)).to(device)
opt = torch.optim.Adam(big.parameters())
big(torch.randn(8, 1024, device=device)).sum().backward()
opt.step()


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


params = list(big.parameters())
weights = nbytes(params)
grads = nbytes(p.grad for p in params)
adam_state = nbytes(v for state in opt.state.values() for v in state.values() if torch.is_tensor(v) and v.dim() > 0)
print(f"weights {weights / 2**20:.1f} MiB, grads {grads / 2**20:.1f} MiB, Adam state {adam_state / 2**20:.1f} MiB")
print(f"before any activation: {(weights + grads + adam_state) / weights:.0f}x the size of the weights")

# ---------------------------------------------------------------------------------------------
section("6. Gradient accumulation gives the gradient of the big batch")

torch.manual_seed(0)
model = nn.Linear(3, 1).to(device)
inputs, targets = torch.randn(8, 3, device=device), torch.randn(8, 1, device=device)

model.zero_grad()
F.mse_loss(model(inputs), targets).backward()  # one batch of 8
big_batch_grad = model.weight.grad.clone()

steps = 4
model.zero_grad()
for xb, yb in zip(inputs.chunk(steps), targets.chunk(steps)):  # 4 micro-batches of 2
    (F.mse_loss(model(xb), yb) / steps).backward()  # divide: the mean over the big batch
print("accumulated == big batch:", torch.allclose(model.weight.grad, big_batch_grad, atol=1e-6))

model.zero_grad()
for xb, yb in zip(inputs.chunk(steps), targets.chunk(steps)):
    F.mse_loss(model(xb), yb).backward()  # bug: not divided by steps
ratio = (model.weight.grad / big_batch_grad).mean().item()
print("without dividing, the gradient is", round(ratio, 4), "times too large")

# ---------------------------------------------------------------------------------------------
section("7. DataLoader workers load the same batches")

dataset = TensorDataset(torch.arange(12.0))
in_main = [b.tolist() for (b,) in DataLoader(dataset, batch_size=4)]
in_workers = [b.tolist() for (b,) in DataLoader(dataset, batch_size=4, num_workers=2)]
print("num_workers=2 gives the same batches as num_workers=0:", in_main == in_workers)
