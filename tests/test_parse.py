from handbook.verify.document import parse_page

PAGE = """---
kind: guide
summary: s
tags: []
---

# Title

Prose with a [link](other.md).

```python
x = 1
print(x)
```

```output
1
```

```output cuda
1
```

1. A list item

    ```python raises=ValueError
    raise ValueError("boom")
    ```

    ```output
    ValueError: boom
    ```

```text
not an example
```

```python skip="shown only"
import tensorflow
```
"""


def test_regions_keep_true_line_numbers(page_file):
    page = parse_page(page_file(PAGE))
    assert page.front == {"kind": "guide", "summary": "s", "tags": []}
    assert page.front_lines == {"kind": 2, "summary": 3, "tags": 4}
    assert [(h.level, h.text, h.line) for h in page.headings] == [(1, "Title", 7)]
    assert [(link.target, link.line) for link in page.links] == [("other.md", 9)]
    first, second, third = page.examples
    assert first.name.endswith("page.md:11") and first.code == "x = 1\nprint(x)\n"
    assert first.code_line == 12 and first.end_line == 14
    assert (first.output.line, first.output.text) == (16, "1\n")
    assert first.cuda_output.label == "cuda" and first.cuda_output.line == 20
    assert second.line == 26 and second.indent == "    " and second.options.raises == "ValueError"
    assert second.output.text == "ValueError: boom\n"
    assert third.options.skip == "shown only" and third.output is None
    assert page.problems == []


def test_output_after_prose_is_a_problem(page_file):
    page = parse_page(page_file("---\nkind: guide\n---\n\n```python\nprint(1)\n```\n\nProse.\n\n```output\n1\n```\n"))
    assert page.examples[0].output is None
    assert [(p.line, p.code) for p in page.problems] == [(11, "HB061")]


def test_bad_front_matter_is_reported_with_its_line(page_file):
    page = parse_page(page_file("---\nkind: [unclosed\n---\n\n# T\n"))
    assert page.front is None
    assert page.problems[0].code == "HB001"


def test_included_script_runs_with_its_own_line_numbers(tmp_path, monkeypatch):
    import handbook.verify.document as document

    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "s.py").write_text("print('from script')\n")
    monkeypatch.setattr(document, "ROOT", tmp_path)
    page = tmp_path / "p.md"
    page.write_text('---\nkind: guide\n---\n\n```python\n--8<-- "examples/s.py"\n```\n')
    ex = parse_page(page).examples[0]
    assert (ex.include, ex.filename, ex.code_line, ex.code) == (
        "examples/s.py",
        "examples/s.py",
        1,
        "print('from script')\n",
    )


def test_examples_hash_covers_code_and_output_not_prose(page_file):
    base = parse_page(page_file(PAGE)).examples_hash
    assert parse_page(page_file(PAGE.replace("Prose with", "Other prose with"))).examples_hash == base
    assert parse_page(page_file(PAGE.replace("x = 1", "x = 2"))).examples_hash != base
    assert parse_page(page_file(PAGE.replace("```output\n1\n", "```output\n2\n"))).examples_hash != base
