"""Front matter is read without YAML aliases: a "billion laughs" page is one HB001 finding, found at once."""

import multiprocessing
import resource
import time

from handbook.lint.rules import lint_page
from handbook.verify.document import parse_page

# Nine levels of nine aliases each: 9**9 = 387 million strings once expanded.
LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def _lint(path, conn) -> None:
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) << 10 for line in f if line.startswith("VmSize:"))
    cap = size + (2 << 30)  # on the old code: a MemoryError, not the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    started = time.perf_counter()
    findings = lint_page(parse_page(path))
    conn.send(([str(f) for f in findings], time.perf_counter() - started))


def test_billion_laughs_is_a_finding_at_once(tmp_path):
    page = tmp_path / "laughs.md"
    page.write_text(f"---\nkind: guide\nsummary: s\ntags: []\n{LAUGHS}---\n\n# Laughs\n")
    recv, send = multiprocessing.get_context("fork").Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_lint, args=(page, send))
    child.start()
    answered = recv.poll(30)
    child.kill()
    child.join()
    assert answered, "lint did not finish within 30 s"
    findings, seconds = recv.recv()
    assert any(": HB001 front matter is not valid YAML: found the alias *a;" in f for f in findings), findings
    assert seconds < 5


def test_a_merge_key_is_an_alias_too(tmp_path):
    page = tmp_path / "merge.md"
    page.write_text("---\nbase: &base {kind: guide}\nother:\n  <<: *base\n---\n\n# Merge\n")
    (problem,) = parse_page(page).problems
    assert problem.code == "HB001" and problem.line == 4 and "alias *base" in problem.message
