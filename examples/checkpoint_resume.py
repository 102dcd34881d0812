"""Save a training checkpoint, resume from it, and check that the resumed run equals an uninterrupted one."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
EPOCHS = 6


def make_loader():
    """A small regression data set; shuffle=True draws each epoch's order from the global CPU generator."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1 * torch.randn(64, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)


def make_training(seed):
    """Model, optimizer and scheduler, built from code (only their state goes into the checkpoint)."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 1)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    return model, optimizer, scheduler


def train_one_epoch(model, optimizer, scheduler, loader):
    model.train()
    total = 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    scheduler.step()
    return total / len(loader)


def rng_state():
    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state):
    torch.set_rng_state(state["cpu"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(path, epoch, model, optimizer, scheduler):
    checkpoint = {
        "epoch": epoch,                       # the number of epochs already done
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),  # AdamW's running averages and step counts
        "scheduler": scheduler.state_dict(),  # where StepLR is in its schedule
        "rng": rng_state(),                   # shuffling order and dropout masks
    }
    tmp = path + ".tmp"
    torch.save(checkpoint, tmp)
    os.replace(tmp, path)                     # atomic: a crash never leaves a half-written checkpoint


def load_checkpoint(path, model, optimizer, scheduler, restore=("optimizer", "scheduler", "rng")):
    # Load to the CPU: load_state_dict moves the values to the model's device, and the RNG state must stay on the CPU.
    checkpoint = torch.load(path, map_location="cpu")   # weights_only=True (the default) is enough
    model.load_state_dict(checkpoint["model"])
    if "optimizer" in restore:
        optimizer.load_state_dict(checkpoint["optimizer"])
    if "scheduler" in restore:
        scheduler.load_state_dict(checkpoint["scheduler"])
    if "rng" in restore:
        set_rng_state(checkpoint["rng"])
    return checkpoint["epoch"]


def fmt(losses):
    return " ".join(f"{loss:.4f}" for loss in losses)


# 1. The reference: six epochs in one go.
loader = make_loader()
model, optimizer, scheduler = make_training(seed=0)
uninterrupted = [train_one_epoch(model, optimizer, scheduler, loader) for _ in range(EPOCHS)]
print("uninterrupted losses:", fmt(uninterrupted))

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "checkpoint.pt")

    # 2. Train three epochs, save a checkpoint, and "stop the program".
    loader = make_loader()
    model, optimizer, scheduler = make_training(seed=0)
    first_part = [train_one_epoch(model, optimizer, scheduler, loader) for _ in range(3)]
    save_checkpoint(path, 3, model, optimizer, scheduler)
    del model, optimizer, scheduler
    print("checkpoint keys:", sorted(torch.load(path, map_location="cpu")))

    # 3. A fresh start: new objects (another seed, to show that everything comes from the file), then resume.
    def resume(restore=("optimizer", "scheduler", "rng")):
        torch.manual_seed(123)
        loader = make_loader()
        model, optimizer, scheduler = make_training(seed=1)
        start = load_checkpoint(path, model, optimizer, scheduler, restore)
        losses = [train_one_epoch(model, optimizer, scheduler, loader) for _ in range(start, EPOCHS)]
        return start, losses, scheduler.get_last_lr()[0]

    start, second_part, last_lr = resume()
    print(f"resumed at epoch {start}, last lr {last_lr}")
    print("resumed losses:      ", fmt(first_part + second_part))
    print("identical to the uninterrupted run:", first_part + second_part == uninterrupted)

    # 4. What goes wrong when a part of the state is missing.
    for missing in ["optimizer", "scheduler", "rng"]:
        kept = tuple(k for k in ("optimizer", "scheduler", "rng") if k != missing)
        _, losses, last_lr = resume(kept)
        same = first_part + losses == uninterrupted
        print(f"without the {missing:9} state: identical={same}, last lr {last_lr}, epoch 4 loss {losses[0]:.4f}")
