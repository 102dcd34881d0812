"""EMA and SWA on one small, noisy regression: the same SGD run, with an EMA copy and an SWA copy of the model.

Run it with `python examples/ema_swa.py`. Everything is synthetic and seeded (no download). The model has a
BatchNorm layer, so the SWA copy needs update_bn before it is evaluated, and the EMA copy averages buffers too.
"""
import torch
from torch import nn
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
true_w = torch.randn(20, 1)
x_train = torch.randn(512, 20)
y_train = x_train @ true_w + 0.5 * torch.randn(512, 1)     # noisy labels: single SGD iterates jitter
x_test = torch.randn(2048, 20)
y_test = x_test @ true_w
train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(20, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)   # a constant, fairly high lr

ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99), use_buffers=True)
swa_model = AveragedModel(model)                      # equal-weight average of the snapshots it is given
swa_start, epochs = 10, 20
swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=1)   # SWA phase: keep a constant lr


def test_loss(m):
    m.eval()
    with torch.no_grad():
        return nn.functional.mse_loss(m(x_test), y_test).item()


for epoch in range(epochs):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(xb), yb).backward()
        optimizer.step()
        ema_model.update_parameters(model)            # EMA: after every optimizer step
    if epoch >= swa_start:
        swa_model.update_parameters(model)            # SWA: once per epoch, in the SWA phase
        swa_scheduler.step()
    if epoch in (swa_start - 1, epochs - 1):
        print(f"epoch {epoch + 1:2d}: lr {optimizer.param_groups[0]['lr']:.3f}  plain model test MSE {test_loss(model):.4f}")

print(f"SWA snapshots averaged: {swa_model.n_averaged.item()}")
print(f"SWA before update_bn:   test MSE {test_loss(swa_model):.4f}   (BatchNorm statistics copied from the latest model)")
update_bn(train_loader, swa_model)                    # one pass over the data recomputes them
print(f"SWA after update_bn:    test MSE {test_loss(swa_model):.4f}")
print(f"EMA (decay 0.99):       test MSE {test_loss(ema_model):.4f}")
