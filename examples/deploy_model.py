"""Deploy a model: export it with a dynamic batch size, save the .pt2 file, load it where the model's code is not
available, check that it computes what the original does, and keep the state_dict for retraining.
"""
import os

import torch
from torch import nn

torch.manual_seed(0)


class SmallNet(nn.Module):
    """A small image classifier for 3 x 32 x 32 inputs."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(32, num_classes))

    def forward(self, x):
        return self.head(self.features(x))


model = SmallNet().eval()  # 1. eval(): dropout off, BatchNorm on its running statistics, in the exported graph too

# 2. Export with a dynamic batch dimension, so the file accepts any batch size from 1 up
example = torch.randn(4, 3, 32, 32)
batch = torch.export.Dim("batch", min=1, max=1024)
exported = torch.export.export(model, (example,), dynamic_shapes={"x": {0: batch}})

# 3. Save: the graph and the weights in one .pt2 file; the state_dict separately, for whoever retrains
torch.export.save(exported, "small_net.pt2", extra_files={"classes.txt": ",".join(str(i) for i in range(10))})
torch.save(model.state_dict(), "small_net_state_dict.pt")
print(f"small_net.pt2: {os.path.getsize('small_net.pt2') / 1024:.0f} KiB, "
      f"state_dict: {os.path.getsize('small_net_state_dict.pt') / 1024:.0f} KiB")

# 4. Load where SmallNet is not defined: only torch is needed
extra = {"classes.txt": ""}
served = torch.export.load("small_net.pt2", extra_files=extra).module()
classes = extra["classes.txt"].split(",")

# 5. Check: the same outputs as the original, for several batch sizes (float64 reference not needed: same kernels)
for n in (1, 7, 64):
    x = torch.randn(n, 3, 32, 32)
    with torch.inference_mode():
        same = torch.allclose(served(x), model(x), atol=1e-5)
    print(f"batch {n:2d}: same outputs {same}")

with torch.inference_mode():
    prediction = served(torch.randn(1, 3, 32, 32)).argmax(dim=1).item()
print("predicted class name:", classes[prediction] in classes)

# 6. Outside the declared range, the loaded program refuses the input instead of computing garbage
try:
    served(torch.randn(2000, 3, 32, 32))
except Exception as error:
    print("batch 2000 refused:", type(error).__name__)
