"""Fine-tune a ResNet-18: load saved weights, replace the head, freeze the backbone, discriminative learning rates,
BatchNorm kept in eval mode. Nothing is downloaded: a state_dict saved by the script stands in for the pretrained
file, and the data are synthetic (the class is which colour channel is brightest).
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision import models

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# --- "Pretrained" weights: in real code, the file you downloaded once (or weights=ResNet18_Weights.DEFAULT) --------
model = models.resnet18(weights=None)
torch.save(model.state_dict(), "resnet18_pretrained.pth")
model.load_state_dict(torch.load("resnet18_pretrained.pth", weights_only=True))

# --- 1. Replace the head: 1000 ImageNet classes -> 3 classes ---------------------------------------------------------
model.fc = nn.Linear(model.fc.in_features, 3)

# --- 2. Freeze the early layers: no gradients, no updates ------------------------------------------------------------
for name, param in model.named_parameters():
    if not name.startswith(("layer4.", "fc.")):
        param.requires_grad_(False)
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"trainable parameters: {trainable:,} of {sum(p.numel() for p in model.parameters()):,}")

# --- 3. Discriminative learning rates: the new head learns 10x faster than the pretrained block ------------------------
optimizer = torch.optim.SGD(
    [
        {"params": model.layer4.parameters(), "lr": 1e-2},
        {"params": model.fc.parameters(), "lr": 1e-1},
    ],
    momentum=0.9,
)
print("learning rates:", [group["lr"] for group in optimizer.param_groups])
model.to(device)


# --- 4. BatchNorm in eval mode: keep the pretrained running statistics (small batches would ruin them) --------------
def train_mode_with_frozen_batchnorm(model):
    model.train()
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()


# --- Data: 64 images of 3 x 32 x 32; the label is the channel that was brightened -----------------------------------
generator = torch.Generator().manual_seed(0)
labels = torch.randint(0, 3, (64,), generator=generator)
images = torch.rand(64, 3, 32, 32, generator=generator) * 0.2
images[torch.arange(64), labels] += 0.8
loader = DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=True,
                    generator=torch.Generator().manual_seed(0))

loss_fn = nn.CrossEntropyLoss()
bn_before = model.bn1.running_mean.clone()
for epoch in range(5):
    train_mode_with_frozen_batchnorm(model)
    total = 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
    print(f"epoch {epoch + 1}: train loss {total / len(images):.3f}")

model.eval()
with torch.inference_mode():
    accuracy = (model(images.to(device)).argmax(dim=1).cpu() == labels).float().mean().item()
print(f"accuracy on the training images: {accuracy:.2f}")
print("BatchNorm statistics unchanged:", torch.equal(bn_before, model.bn1.running_mean))
print("frozen conv1 has no gradient:", model.conv1.weight.grad is None)
