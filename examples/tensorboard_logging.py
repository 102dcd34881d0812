"""Log a small training run to TensorBoard, then read the event files back and print what was logged.

Runs in a few seconds on a CPU; uses the GPU when one is available. To look at the curves afterwards:
    tensorboard --logdir runs
"""
import shutil

import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter

torch.manual_seed(0)  # model initialization
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# --- Data: 2 features; the label says whether their sum is positive. Made on the CPU, the same everywhere. ---
data_generator = torch.Generator().manual_seed(0)
x = torch.randn(256, 2, generator=data_generator)
y = (x.sum(dim=1) > 0).long()
train_loader = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=16, shuffle=True,
                          generator=torch.Generator().manual_seed(0))
val_x, val_y = x[192:].to(device), y[192:].to(device)

model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

LOG_DIR = "runs/tensorboard_demo"  # one directory per run
shutil.rmtree(LOG_DIR, ignore_errors=True)  # start clean, so running the script twice does not mix two runs
LOG_EVERY = 4  # steps

with SummaryWriter(LOG_DIR) as writer:  # the with block closes (and flushes) the writer at the end
    step = 0
    for epoch in range(4):
        model.train()
        running = torch.zeros((), device=device)  # summed on the device: no GPU sync at every step
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.detach()
            step += 1
            if step % LOG_EVERY == 0:  # one number per LOG_EVERY steps: the mean training loss
                writer.add_scalar("loss/train", (running / LOG_EVERY).item(), step)
                running.zero_()

        # once per epoch: validation metrics, learning rate and a weight histogram, all at the current step
        model.eval()
        with torch.no_grad():
            logits = model(val_x)
            val_loss = loss_fn(logits, val_y).item()
            val_acc = (logits.argmax(dim=1) == val_y).float().mean().item()
        writer.add_scalar("loss/val", val_loss, step)
        writer.add_scalar("accuracy/val", val_acc, step)
        writer.add_scalar("lr", scheduler.get_last_lr()[0], step)
        writer.add_histogram("weights/layer0", model[0].weight, step)
        scheduler.step()

    # the run's settings next to its final result, for TensorBoard's HPARAMS tab (written in a sub-run)
    writer.add_hparams({"lr": 0.1, "batch_size": 16, "epochs": 4}, {"hparam/val_accuracy": val_acc},
                       run_name="hparams")

# --- Read the event files back, as TensorBoard does, and print what is in them. ------------------------------
events = EventAccumulator(LOG_DIR, size_guidance={"histograms": 0})  # 0 = keep all (the default keeps 1)
events.Reload()
print("scalar tags:", events.Tags()["scalars"])
for tag in ["loss/val", "accuracy/val", "lr"]:
    print(f"{tag:13s}", [(e.step, round(e.value, 3)) for e in events.Scalars(tag)])
train_curve = events.Scalars("loss/train")
print(f"loss/train    {len(train_curve)} points, first {train_curve[0].value:.3f}, last {train_curve[-1].value:.3f}")
histograms = events.Histograms("weights/layer0")
print("weights/layer0 histograms at steps", [h.step for h in histograms], "with", int(histograms[0].histogram_value.num),
      "values each")

hparams = EventAccumulator(f"{LOG_DIR}/hparams")
hparams.Reload()
print("hparams run:", [(tag, round(hparams.Scalars(tag)[0].value, 3)) for tag in hparams.Tags()["scalars"]])
