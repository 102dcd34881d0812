"""Data augmentation with torchvision.transforms.v2: a classification pipeline (per-sample transforms, then CutMix or
MixUp on the batch) and a detection pipeline in which boxes and labels follow the image. Synthetic data only.
"""
import torch
from torch.utils.data import DataLoader, default_collate
from torchvision import tv_tensors
from torchvision.datasets import FakeData
from torchvision.transforms import v2

torch.manual_seed(0)
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]

# --- Classification ------------------------------------------------------------------------------------------------
# Geometry first (it shrinks the image), photometric changes on uint8, then float + normalize, erasing last.
train_tf = v2.Compose([
    v2.ToImage(),                                   # PIL -> tv_tensors.Image (uint8)
    v2.RandomResizedCrop(48, scale=(0.5, 1.0)),     # small images: a milder scale range than the default
    v2.RandomHorizontalFlip(),
    v2.TrivialAugmentWide(),
    v2.ToDtype(torch.float32, scale=True),
    v2.Normalize(MEAN, STD),
    v2.RandomErasing(p=0.25),
])
eval_tf = v2.Compose([v2.ToImage(), v2.Resize(56), v2.CenterCrop(48), v2.ToDtype(torch.float32, scale=True),
                      v2.Normalize(MEAN, STD)])

train_set = FakeData(size=64, image_size=(3, 64, 64), num_classes=10, transform=train_tf)
eval_set = FakeData(size=16, image_size=(3, 64, 64), num_classes=10, transform=eval_tf)
cutmix_or_mixup = v2.RandomChoice([v2.CutMix(num_classes=10), v2.MixUp(num_classes=10)])


def collate_with_mixing(batch):
    return cutmix_or_mixup(*default_collate(batch))  # on the batch: mixes samples, labels become soft


train_loader = DataLoader(train_set, batch_size=16, shuffle=True, collate_fn=collate_with_mixing,
                          generator=torch.Generator().manual_seed(0))
images, soft_labels = next(iter(train_loader))
print("train batch:", tuple(images.shape), images.dtype, "labels", tuple(soft_labels.shape), soft_labels.dtype)
print("soft label rows sum to 1:", torch.allclose(soft_labels.sum(dim=1), torch.ones(16)))
eval_images, eval_labels = next(iter(DataLoader(eval_set, batch_size=16)))
print("eval batch: ", tuple(eval_images.shape), "labels", eval_labels.dtype, "(hard labels, no augmentation)")
print("eval is deterministic:", torch.equal(eval_set[3][0], eval_set[3][0]))

# --- Detection -----------------------------------------------------------------------------------------------------
detection_tf = v2.Compose([
    v2.RandomPhotometricDistort(p=1.0),             # colours only: boxes pass through
    v2.RandomZoomOut(fill={tv_tensors.Image: 124, "others": 0}, p=1.0),
    v2.RandomIoUCrop(),                             # crops so that boxes keep some overlap
    v2.RandomHorizontalFlip(p=0.5),
    v2.Resize((128, 128)),
    v2.SanitizeBoundingBoxes(),                     # drops boxes (and their labels) left degenerate or outside
    v2.ToDtype(torch.float32, scale=True),
])
image = tv_tensors.Image(torch.randint(0, 256, (3, 100, 150), dtype=torch.uint8))
target = {
    "boxes": tv_tensors.BoundingBoxes([[10, 10, 60, 50], [70, 20, 140, 90], [0, 80, 20, 100]], format="XYXY",
                                      canvas_size=(100, 150)),
    "labels": torch.tensor([1, 2, 3]),
}
for attempt in range(3):
    out_image, out_target = detection_tf(image, target)
    boxes = out_target["boxes"]
    inside = bool(((boxes[:, 0::2] <= 128) & (boxes[:, 1::2] <= 128)).all())
    print(f"sample {attempt}: image {tuple(out_image.shape)}, {len(boxes)} boxes kept, labels "
          f"{out_target['labels'].tolist()}, all inside the image: {inside}")
