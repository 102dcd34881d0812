from handbook import render

PAGE = """---
kind: api
api: torch.cat
summary: s
tags: [math]
---

# torch.cat

## Official definition

Prose.

```python raises=RuntimeError
boom()
```

```output
RuntimeError: x
```

```python
print(1)
```

```output
1
```

```output cuda
2
```
"""


def test_render_strips_front_matter_and_options_adds_signature_and_tabs(tmp_path):
    path = tmp_path / "cat.md"
    path.write_text(PAGE)
    out = render.render(PAGE, path, {"pages": {}})
    assert not out.startswith("---") and "kind: api" not in out
    assert "cat(tensors, dim=0, *, out=None) -> Tensor" in out  # from the installed torch
    assert '```python title="raises RuntimeError"' in out and "raises=RuntimeError" not in out
    assert '=== "CPU"' in out and '=== "CUDA"' in out
    assert "CPU: not yet verified" in out and "CUDA: not yet verified" in out
