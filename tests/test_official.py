from handbook.site.official import official_markdown, rst_to_markdown
from handbook.verify.record import environment

RST = """Joins tensors in :attr:`tensors`; see :func:`~torch.stack` and :ref:`the notes <notes-x>`.

.. note::
    Uses ``out`` when given :math:`x < y`.

.. math::
    y = x + 1

Args:
    tensors (sequence of Tensors): the inputs,
        all of the same shape.
    dim (int, optional): the dimension

Keyword args:
    out (Tensor, optional): the output

Example::

    >>> torch.cat([x, x])
    tensor([1, 1])

Examples:
    >>> torch.cat([x])
"""


def test_rst_becomes_markdown_and_examples_are_left_out():
    md = rst_to_markdown(RST)
    assert "Joins tensors in `tensors`; see `torch.stack` and `the notes`." in md
    assert '!!! note "Note"' in md and "    Uses `out` when given \\(x < y\\)." in md  # math for arithmatex
    assert "\\[\ny = x + 1\n\\]" in md
    assert "| `tensors` | sequence of Tensors | the inputs, all of the same shape. |" in md
    assert "**Keyword arguments**" in md and "| `out` | Tensor, optional | the output |" in md
    for leftover in (">>>", "Example", ":attr:", "``out``"):
        assert leftover not in md


def test_official_definition_comes_from_the_installed_torch():
    text = "\n".join(official_markdown("torch.nn.functional.conv2d"))  # docstring added at runtime
    # a signature longer than a line is wrapped one parameter per line
    assert (
        "conv2d(\n    input,\n    weight,\n    bias=None,\n    stride=1,\n    padding=0,\n    dilation=1,\n    groups=1,\n) -> Tensor"
        in text
    )
    assert "Applies a 2D convolution" in text and ">>>" not in text
    # the pinned release's reference, not /stable/
    release = ".".join(environment()["torch"].split("+")[0].split(".")[:2])
    assert f"https://docs.pytorch.org/docs/{release}/generated/torch.nn.functional.conv2d.html" in text
    assert "/stable/" not in text
    assert "Applies a 2D convolution" in "\n".join(official_markdown("torch.nn.Conv2d"))  # built with .format()
    assert official_markdown("torch.no_such_api") == []


def test_a_signature_shows_no_memory_address():
    # torch.nn.Transformer's defaults are a function and a CompilationUnit: repr() names their address
    shown = "\n".join(official_markdown("torch.nn.Transformer"))
    assert "<function relu>" in shown and " at 0x" not in shown
