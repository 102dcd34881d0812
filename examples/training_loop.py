"""A complete, minimal training loop: train_one_epoch and validate on a tiny synthetic dataset.

Runs in a few seconds on a CPU; uses the GPU when one is available.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)  # model initialization
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


# --- Data: 4 features, 3 classes; the label is the largest of three fixed linear scores. ---------------------
def make_dataset(n, generator):
    x = torch.randn(n, 4, generator=generator)
    scores = x @ torch.tensor([[1.0, -1.0, 0.5], [0.5, 1.0, -1.0], [-1.0, 0.5, 1.0], [0.2, 0.2, 0.2]])
    y = scores.argmax(dim=1)
    return TensorDataset(x, y)


data_generator = torch.Generator().manual_seed(0)  # data made on the CPU, the same on every machine
train_set = make_dataset(512, data_generator)
val_set = make_dataset(256, data_generator)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
val_loader = DataLoader(val_set, batch_size=128)  # no need to shuffle for validation

# --- Model, loss, optimizer ----------------------------------------------------------------------------------
model = nn.Sequential(
    nn.Linear(4, 32),
    nn.BatchNorm1d(32),  # behaves differently in train() and eval() mode
    nn.ReLU(),
    nn.Linear(32, 3),
).to(device)  # move the model before creating the optimizer
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)


def train_one_epoch(model, loader, loss_fn, optimizer, device):
    model.train()  # training mode: BatchNorm uses batch statistics and updates its running ones
    total_loss, total = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()  # 1. clear the gradients of the previous step
        loss = loss_fn(model(x), y)  # 2. forward pass
        loss.backward()  # 3. compute the gradients
        optimizer.step()  # 4. update the parameters
        total_loss += loss.item() * x.size(0)  # .item(): a Python float, no graph kept alive
        total += x.size(0)
    return total_loss / total


def validate(model, loader, loss_fn, device):
    model.eval()  # evaluation mode: BatchNorm uses its running statistics
    total_loss, correct, total = 0.0, 0, 0
    with torch.no_grad():  # no graph, no gradients: less memory
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            total_loss += loss_fn(logits, y).item() * x.size(0)
            correct += (logits.argmax(dim=1) == y).sum().item()
            total += x.size(0)
    return total_loss / total, correct / total


for epoch in range(1, 6):
    train_loss = train_one_epoch(model, train_loader, loss_fn, optimizer, device)
    val_loss, val_acc = validate(model, val_loader, loss_fn, device)
    print(f"epoch {epoch}: train loss {train_loss:.4f}  val loss {val_loss:.4f}  val accuracy {val_acc:.4f}")
