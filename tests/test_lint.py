"""Every lint code has a failing fixture page, and on that page exactly that code fires."""

import warnings
from pathlib import Path

import pytest

from handbook.lint.rules import CODES, lint, lint_page, orphan_scripts
from handbook.verify.document import parse_page

LINT = Path(__file__).parent / "fixtures" / "lint"
MAP_CODES = ["HB090", "HB091", "HB092", "HB094"]
MAP_FIXTURES = [
    *MAP_CODES,
    "HB090-yaml",
]  # a map that is not YAML at all is a finding, not a crash  # whole-map checks, run over a fixture migration/ folder
PAGE_CODES = sorted(code for code in CODES if code != "HB080" and code not in MAP_CODES)


def _pages(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.md"))


def test_every_code_has_a_fixture():
    assert sorted({p.name[:5] for p in LINT.iterdir() if p.name.startswith("HB")}) == sorted(CODES)


def test_map_row_findings_name_the_yaml_line():
    from handbook.lint.rules import lint_maps

    pages = [parse_page(p) for p in _pages(LINT / "HB091" / "docs")]
    (finding,) = lint_maps(pages, LINT / "HB091" / "migration")
    assert finding.path.endswith("HB091/migration/fixture.yml") and finding.line == 3


@pytest.mark.parametrize("code", PAGE_CODES)
def test_fixture_fires_exactly_its_code(code):
    pages = _pages(LINT / code)
    assert pages, f"no fixture page for {code}"
    findings = [f for page in pages for f in lint_page(parse_page(page))]
    assert findings, f"{code}: the fixture produced no finding"
    assert {f.code for f in findings} == {code}, [str(f) for f in findings]


def test_valid_pages_are_clean():
    findings = [f for page in _pages(LINT / "valid") for f in lint_page(parse_page(page))]
    assert findings == []


@pytest.mark.parametrize("fixture", MAP_FIXTURES)
def test_map_fixture_fires_exactly_its_code(fixture):
    from handbook.lint.rules import lint_maps

    pages = [parse_page(p) for p in _pages(LINT / fixture / "docs")]
    findings = list(lint_maps(pages, LINT / fixture / "migration"))
    assert findings and {f.code for f in findings} == {fixture[:5]}, [str(f) for f in findings]


def test_valid_map_is_clean_and_renders_links_to_examples_and_pages():
    from handbook.lint import maps
    from handbook.lint.rules import lint_maps

    pages = [parse_page(p) for p in _pages(LINT / "valid-map" / "docs")]
    assert list(lint_maps(pages, LINT / "valid-map" / "migration")) == []
    known = maps.load_all(LINT / "valid-map" / "migration")
    rows = maps.table(known["fixture"], maps.DOCS / "migration" / "numpy.md")
    assert rows[0] == "| NumPy | torch | difference | note |"
    assert "| `np.concatenate` | [`torch.cat`](../torch/cat.md) | only names differ |" in rows[2]
    assert "[example](#ex-concat)" in rows[2] and "no direct equivalent" in rows[4]
    assert maps.search_words("<!-- migration-map: fixture -->", known)[0] == "np.concatenate"


def test_orphan_script_fires_hb080():
    pages = [parse_page(p) for p in _pages(LINT / "HB080" / "docs")]
    findings = list(orphan_scripts(pages, LINT / "HB080" / "examples"))
    assert [f.code for f in findings] == ["HB080"]
    assert findings[0].path.endswith("HB080/examples/orphan.py")


def test_findings_are_printed_path_line_code_message():
    (finding,) = lint([str(LINT / "HB010")])
    assert str(finding).endswith("HB010/torch/cat.md:5: HB010 tag 'shape-op' is not in tags/tags.yml")


def test_cli_exit_codes(capsys):
    from handbook.cli import main

    assert main(["lint", str(LINT / "valid")]) == 0
    assert main(["lint", str(LINT / "HB031")]) == 1
    assert "HB031" in capsys.readouterr().out
    assert main(["lint", str(LINT / "no-such-folder")]) == 2


@pytest.mark.parametrize(
    "api, params",
    [
        ("torch.cat", ["tensors", "dim", "out"]),  # builtin: the docstring's signature line
        ("torch.max", ["input", "out", "dim", "keepdim", "other"]),  # every overload, not the return annotation
        ("torch.nn.Module.to", ["device", "dtype", "non_blocking", "tensor", "memory_format"]),  # (*args, **kwargs)
        ("torch.Tensor.backward", ["gradient", "retain_graph", "create_graph", "inputs"]),  # Python: inspect
        ("torch.einsum", ["equation", "operands"]),
        (
            "torch.nn.GRU",
            [
                "input_size",
                "hidden_size",
                "num_layers",
                "bias",
                "batch_first",
                "dropout",
                "bidirectional",
                "device",
                "dtype",
            ],
        ),  # a class documenting __init__(...)
        (
            "torch.nn.functional.scaled_dot_product_attention",
            ["query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"],
        ),  # wrapped line
        ("torch.linalg.norm", ["input", "ord", "dim", "keepdim", "out", "dtype"]),  # documented as linalg.norm(
        ("torch.tensor", ["data", "dtype", "device", "requires_grad", "pin_memory"]),  # not its examples
        ("torch.Tensor.tolist", []),  # no parameters is not "unreadable"
        ("torch.autograd.Function", ["args", "kwargs"]),  # generic, and no docstring line says otherwise
        (
            "torchvision.ops.roi_align",
            ["input", "boxes", "output_size", "spatial_scale", "sampling_ratio", "aligned"],
        ),  # also the name of a module: the function the package exports is meant
    ],
)
def test_real_signatures(api, params):
    from handbook.lint.signatures import parameters, resolve

    assert parameters(resolve(api)) == params


def test_signature_overrides_hold_in_the_installed_torch():
    """signatures.yml is only for APIs torch states no signature for, and each entry matches real calls."""
    import torch

    from handbook.lint.signatures import _overrides, parameters, resolve

    assert all(parameters(resolve(name)) is None for name in _overrides())
    with pytest.raises(TypeError):
        torch.zeros(1).detach(1)  # takes no argument
    torch.Generator(device="cpu")
    with pytest.raises(TypeError):
        torch.Generator(seed=1)  # device is its only parameter
    x = torch.randn(3)
    torch.log_softmax(input=x, dim=0, dtype=torch.float64, out=torch.empty(3, dtype=torch.float64))
    with pytest.raises(TypeError):
        torch.log_softmax(x, 0, bogus=1)
    assert torch.device(type="cuda", index=1).index == 1
    with pytest.raises(TypeError):
        torch.device(kind="cpu")
    assert isinstance(torch.backends.cudnn.benchmark, bool)
    v = torch.autograd.Variable(data=torch.zeros(1), requires_grad=True, _grad_fn=None, name="v")
    assert v.requires_grad
    with pytest.warns(UserWarning, match="volatile"):
        torch.autograd.Variable(torch.zeros(1), volatile=True)
    with pytest.raises(TypeError):
        torch.autograd.Variable(torch.zeros(1), bogus=1)

    assert issubclass(torch.cuda.OutOfMemoryError, RuntimeError)
    assert torch.cuda.OutOfMemoryError("message").args == ("message",)  # only the message, as for any exception

    torch.relu(input=x)
    torch.special.expit(input=x, out=torch.empty(3))
    assert torch.finfo(type=torch.float16).bits == 16 and torch.iinfo(type=torch.int8).max == 127
    for cls in (torch.Tensor, torch.FloatTensor, torch.LongTensor):
        assert cls(data=[1]).shape == (1,) and cls(size=(2,)).shape == (2,) and cls([1], device="cpu").shape == (1,)
        assert cls(other=cls([3])).tolist() == [3] and cls(storage=cls([4]).untyped_storage()).tolist() == [4]
        with pytest.raises(TypeError):
            cls(bogus=1)
    q, r = torch.linalg.qr(A=torch.eye(2), mode="reduced", out=(torch.empty(2, 2), torch.empty(2, 2)))
    assert torch.equal(q @ r, torch.eye(2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        torch.linalg.qr(torch.eye(2), bogus=1)

    # torch.cuda.FloatTensor parses the same keywords (its first call warns that it is no longer recommended)
    cuda_cls = torch.cuda.FloatTensor
    storage = torch.FloatTensor([4]).untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for keyword, value in (("data", [1.0]), ("size", (2,)), ("storage", storage), ("device", "cuda")):
            if torch.cuda.is_available():
                cuda_cls(**{keyword: value})
            else:
                with pytest.raises(RuntimeError):  # parsed: it gets as far as starting CUDA
                    cuda_cls(**{keyword: value})
        with pytest.raises(TypeError, match="expected TensorOptions"):  # a CPU tensor as `other`: parsed, refused
            cuda_cls(other=torch.FloatTensor([3]))
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            cuda_cls(bogus=1)


def test_category_vocabulary_rejects_bad_files(tmp_path):
    from handbook.lint import categories

    cases = {
        "torch.nope:\n  - {id: a, en: A, zh: 甲}\n": "is not a module section",
        "torch:\n  - {id: a, en: A}\n": "exactly the fields",
        "torch:\n  - {id: a, en: A, zh: 甲}\n  - {id: a, en: B, zh: 乙}\n": "twice",
        "torch:\n  - {id: a, en: '', zh: 甲}\n": "empty field",
    }
    for n, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"c{n}.yml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(categories.CategoryError, match=message):
            categories.load(path)


def test_every_module_section_lists_categories():
    from handbook.lint import categories
    from handbook.lint.modules import module_tree, sections_by_title

    assert sorted(categories.load()) == sorted(sections_by_title(module_tree()))
    assert all(categories.of_module(module) for module in categories.load())


def test_a_capitalized_api_may_take_class_only_beside_a_lowercase_twin_that_is_not_a_module():
    from handbook.lint.rules import expected_paths

    assert expected_paths("torch.optim.Adam") == ("torch/optim/adam.md",)  # torch.optim.adam is a module
    assert expected_paths("torch.Tensor") == ("torch/tensor.md", "torch/tensor-class.md")  # torch.tensor, a function
    assert expected_paths("torch.Tensor.T") == ("torch/tensor/t.md", "torch/tensor/t-attribute.md")
    assert expected_paths("torch.cat") == ("torch/cat.md",)
