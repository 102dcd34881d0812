"""Train a small CNN image classifier in the CIFAR-10 style: v2 augmentation, SGD with a cosine schedule, accuracy.

By default it trains on a tiny synthetic stand-in for CIFAR-10 (3x32x32 images, 10 classes, 200 training images)
so that it runs in seconds on a CPU without downloading anything. Run it as
    python image_classifier.py --cifar10
to train on the real CIFAR-10 instead (downloads about 170 MB into ./data on first use).
"""
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torchvision import datasets
from torchvision.transforms import v2

torch.manual_seed(0)  # model initialization and the random augmentations
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
USE_REAL_CIFAR10 = "--cifar10" in sys.argv
EPOCHS = 30 if USE_REAL_CIFAR10 else 3
CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

# --- Transforms: augmentation for training only; both end in float32 tensors normalized per channel. ----------
MEAN, STD = [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]  # for real CIFAR-10, compute them from the training data
train_tf = v2.Compose([
    v2.ToImage(),                                   # PIL image (CIFAR10) or uint8 tensor -> tv_tensors.Image
    v2.RandomCrop(32, padding=4),                   # shift by up to 4 pixels (CIFAR-sized images are small)
    v2.RandomHorizontalFlip(),
    v2.ToDtype(torch.float32, scale=True),          # uint8 0..255 -> float32 0..1
    v2.Normalize(MEAN, STD),
])
test_tf = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])


def cifar10_datasets(root="data"):
    """The real CIFAR-10: 50,000 training and 10,000 test images. Downloads on first use."""
    train_set = datasets.CIFAR10(root, train=True, download=True, transform=train_tf)
    test_set = datasets.CIFAR10(root, train=False, download=True, transform=test_tf)
    return train_set, test_set


def synthetic_images(n, generator):
    """n uint8 images (3, 32, 32) and labels: each class has its own colour, plus noise, so a CNN can learn it."""
    palette = torch.randint(40, 216, (10, 3), generator=generator)              # one RGB colour per class
    labels = torch.randint(0, 10, (n,), generator=generator)
    noise = torch.randn(n, 3, 32, 32, generator=generator) * 40
    images = (palette[labels].view(n, 3, 1, 1) + noise).clamp(0, 255).to(torch.uint8)
    return images, labels


class ImageTensors(Dataset):
    """A map-style dataset over uint8 image tensors that applies transform per sample, like CIFAR10 does."""

    def __init__(self, images, labels, transform):
        self.images, self.labels, self.transform = images, labels, transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.transform(self.images[i]), int(self.labels[i])


if USE_REAL_CIFAR10:
    train_set, test_set = cifar10_datasets()
else:
    images, labels = synthetic_images(300, torch.Generator().manual_seed(0))  # made on the CPU: same everywhere
    train_set = ImageTensors(images[:200], labels[:200], train_tf)            # 200 for training
    test_set = ImageTensors(images[200:], labels[200:], test_tf)              # 100 others for testing

train_loader = DataLoader(train_set, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
test_loader = DataLoader(test_set, batch_size=100)


# --- Model: three conv blocks, global average pooling, one linear layer. ----------------------------------------
def conv_block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU())


model = nn.Sequential(
    conv_block(3, 16), nn.MaxPool2d(2),    # 32x32 -> 16x16
    conv_block(16, 32), nn.MaxPool2d(2),   # 16x16 -> 8x8
    conv_block(32, 64),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Linear(64, len(CLASSES)),
).to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)  # stepped once per epoch


def run_epoch(loader, train):
    """One pass over loader; returns (mean loss, accuracy). Trains when train=True."""
    model.train(train)
    total_loss, correct, seen = 0.0, 0, 0
    with torch.set_grad_enabled(train):
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            logits = model(images)
            loss = loss_fn(logits, labels)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total_loss += loss.item() * len(labels)
            correct += (logits.argmax(dim=1) == labels).sum().item()
            seen += len(labels)
    return total_loss / seen, correct / seen


print(f"train {len(train_set)} images, test {len(test_set)} images, {sum(p.numel() for p in model.parameters())} "
      f"parameters, device {device.type}")
for epoch in range(EPOCHS):
    lr = scheduler.get_last_lr()[0]
    train_loss, train_acc = run_epoch(train_loader, train=True)
    test_loss, test_acc = run_epoch(test_loader, train=False)
    scheduler.step()
    print(f"epoch {epoch + 1}  lr {lr:.4f}  train loss {train_loss:.2f} acc {train_acc:.2f}  "
          f"test loss {test_loss:.2f} acc {test_acc:.2f}")

# --- Predict a few test images. --------------------------------------------------------------------------------
model.eval()
images, labels = next(iter(test_loader))
with torch.no_grad():
    predicted = model(images[:5].to(device)).argmax(dim=1).cpu()
print("predicted:", [CLASSES[i] for i in predicted])
print("true:     ", [CLASSES[i] for i in labels[:5]])
