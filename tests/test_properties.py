"""Property tests: arbitrary text and bytes through the parser, lint and --update never crash or hang, and
--update never changes anything outside output blocks."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handbook.lint.rules import lint_page
from handbook.verify.document import parse_page
from handbook.verify.runner import verify
from handbook.verify.update import KEEP, REMOVE, NewBlock, rewrite

FRAGMENTS = [
    "---",
    "kind: guide",
    "kind: api",
    "api: torch.cat",
    "api: os.system",
    "summary: s",
    "tags: []",
    "# Title",
    "## Examples",
    "```python",
    "```python timeout=inf",
    "```python raises=RuntimeError",
    "```output",
    "```output cuda",
    "````",
    "```",
    "~~~",
    "  ```python",
    "  ```",
    "> ```output",
    "- item",
    "print(1)",
    "x = 1",
    "",
    "   ",
    "\t",
    "[link](missing.md)",
    '--8<-- "examples/none.py"',
    "<!-- migration-map: numpy -->",
]
lines = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=30))
pages = st.lists(lines, max_size=40).map("\n".join)
# The deadline catches a hang, not a slow machine: parsing every migration map takes seconds under load.
FAST = settings(max_examples=200, deadline=10_000, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "page.md"
    path.write_bytes(data)
    return path


@FAST
@given(data=st.one_of(st.binary(max_size=400), pages.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_parser_and_lint_take_any_bytes(tmp_path, data):
    page = parse_page(_write(tmp_path, data))
    findings = lint_page(page)
    assert all(f.line >= 1 and f.code.startswith("HB") for f in findings)


def _outside_output_blocks(text: str) -> list[str]:
    """The page's lines that are not in an output block, blank lines dropped (--update adds and removes those)."""
    page = parse_page(Path("page.md"), text)
    inside = set()
    for ex in page.examples:
        for block in (ex.output, ex.cuda_output):
            if block is not None:
                inside.update(range(block.line, block.end_line + 1))
    return [line for n, line in enumerate(text.split("\n"), 1) if n not in inside and line.strip()]


block_plans = st.one_of(st.just(KEEP), st.just(REMOVE), st.text(max_size=60).map(NewBlock))


@FAST
@given(text=pages, data=st.data())
def test_update_rewrites_nothing_but_output_blocks(text, data):
    page = parse_page(Path("page.md"), text)
    if page.unsafe_to_rewrite:  # verify --update refuses such pages (see test_pages_are_precious)
        return
    plans = {i: (data.draw(block_plans), data.draw(block_plans)) for i in range(len(page.examples))}
    new, _ = rewrite(text, page.examples, plans)
    assert _outside_output_blocks(new) == _outside_output_blocks(text)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prose=pages, printed=st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=80))
def test_verify_update_on_arbitrary_pages_keeps_everything_but_output_blocks(tmp_path, prose, printed):
    text = f"{prose}\n\n```python\nprint({printed!r})\n```\n\n{prose}\n"
    path = _write(tmp_path, text.encode("utf-8", "surrogatepass"))
    before = path.read_bytes()
    verify([str(path)], devices=("cpu",), update=True, use_cache=False, record_path=None)
    after = path.read_bytes()
    if after != before:
        old, new = before.decode().replace("\r\n", "\n"), after.decode().replace("\r\n", "\n")
        assert _outside_output_blocks(new) == _outside_output_blocks(old)


def test_a_new_shared_and_a_new_cuda_block_land_in_that_order():
    """Found by the property above: both blocks added at one place came out CUDA first, an HB061 page."""
    text = "```python\nprint(1)\n```"
    page = parse_page(Path("page.md"), text)
    new, _ = rewrite(text, page.examples, {0: (NewBlock("cpu"), NewBlock("cuda"))})
    (example,) = parse_page(Path("page.md"), new).examples
    assert example.output.text == "cpu\n" and example.cuda_output.text == "cuda\n"
