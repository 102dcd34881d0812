"""`python -m handbook usage`: names resolved through imports, aliases folded, methods attributed, pages matched."""

import json
from collections import Counter

from handbook.usage import rank
from handbook.usage.scan import canonical, file_apis, python_sources, scan

SOURCE = """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import transforms as T

x = torch.concat([torch.zeros(2), torch.ones(2)])   # an alias: counted as torch.cat
y = x.view(2, 2).sum()                               # Tensor methods
model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.step()                                      # by its receiver: Optimizer.step, not Tensor
scheduler.step()
F.relu(y)
np.sum([1, 2])                                        # numpy: never a Tensor method
args.name, image.resize((2, 2))                       # names that mean something else
loader = DataLoader([], batch_size=2)
t = T.ToTensor()
print(torch.__version__.split("+"))
z = torch.long
"""


def test_names_resolve_through_imports_with_aliases_folded():
    found = file_apis(SOURCE)
    assert {
        "torch.cat",
        "torch.zeros",
        "torch.ones",
        "torch.nn.Sequential",
        "torch.nn.Linear",
        "torch.nn.ReLU",
    } <= found
    assert {"torch.nn.functional.relu", "torch.utils.data.DataLoader", "torchvision.transforms.ToTensor"} <= found
    assert "torch.concat" not in found  # "Alias for torch.cat" in the installed docstring
    assert {"torch.__version__", "torch.int64"} <= found  # stops at the string; torch.long is torch.int64
    assert not any(name.endswith(".split") for name in found)


def test_methods_are_attributed_by_receiver_then_to_tensor():
    found = file_apis(SOURCE)
    assert {"torch.Tensor.view", "torch.Tensor.sum", "torch.nn.Module.parameters"} <= found
    assert {"torch.optim.Optimizer.step", "torch.optim.lr_scheduler.LRScheduler.step"} <= found
    assert "torch.Tensor.step" not in found
    assert "torch.Tensor.name" not in found and "torch.Tensor.resize" not in found
    assert file_apis("import torch\nimport numpy as np\nnp.sum([1])\n") == set()  # numpy's, not Tensor.sum
    assert file_apis("x = 1\nx.sum()\n") == set()  # a file that does not import torch uses none of it


def test_canonical_names():
    assert canonical("torch.optim.optimizer.Optimizer") == "torch.optim.Optimizer"  # the public name
    assert canonical("torch.Tensor.clip") == "torch.Tensor.clamp"
    assert canonical("torch.float") == "torch.float32"
    assert canonical("torch.nn") is None  # a module is not an API
    assert canonical("torch.does_not_exist") is None


def test_each_api_counts_once_per_file_and_notebooks_are_read(tmp_path):
    (tmp_path / "a.py").write_text("import torch\ntorch.zeros(1)\ntorch.zeros(2)\n")
    (tmp_path / "b.py").write_text("import torch\ntorch.zeros(1)\n")
    (tmp_path / "broken.py").write_text("import torch\ndef (\n")
    cells = [{"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n", "torch.ones(1)\n"]}]
    (tmp_path / "n.ipynb").write_text(json.dumps({"cells": cells}))
    result = scan([tmp_path])
    assert result.files == 3 and len(result.unparsable) == 1
    assert result.uses["torch.zeros"] == 2 and result.uses["torch.ones"] == 1
    assert len(python_sources(tmp_path)) == 4


def test_ranking_matches_pages_and_counts_coverage():
    pages = {"torch.cat": "docs/torch/cat.md", "torch.sum": "docs/torch/sum.md"}
    uses = Counter({"torch.cat": 5, "torch.Tensor.sum": 4, "torch.Tensor.view": 3})
    rows = rank.ranking(uses, pages)
    assert [(r["api"], r["page"]) for r in rows] == [
        ("torch.cat", "docs/torch/cat.md"),
        ("torch.Tensor.sum", "docs/torch/sum.md"),  # a Tensor method is its function's page
        ("torch.Tensor.view", None),
    ]
    cov = rank.coverage(rows)
    assert cov["100"] == {"with_page": 2, "of": 3, "missing": ["torch.Tensor.view"]}


def test_the_committed_ranking_names_its_corpus_with_commits():
    data = rank.load()
    assert data and len(data["corpus"]) >= 20 and data["files"] >= 1000
    assert all(len(r["commit"]) == 40 for r in data["corpus"])
    assert len(data["apis"]) >= 300 and data["apis"][0]["rank"] == 1
