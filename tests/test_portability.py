"""The portability pass: which runs it plans, and that it catches an output written for one instruction set."""

import io
import shutil

import torch

from handbook.verify import portability
from handbook.verify.portability import plan

FIXTURE = __import__("pathlib").Path(__file__).parent / "fixtures" / "portability" / "capability.md"


def names(runs):
    return [r.name for r in runs]


def test_an_avx512_bf16_machine_imitates_avx512_core_avx2_and_the_baseline():
    runs = plan("AVX512", {"avx512f", "avx512_bf16"}, cores=2, jobs=2)
    assert names(runs) == ["avx512", "avx2", "baseline", "2 threads"]
    avx2 = runs[1].env
    assert avx2 == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
    assert runs[-1].jobs == 1 and runs[-1].env == {"OMP_NUM_THREADS": "2"}


def test_plain_avx512_skips_the_level_it_already_is_and_avx2_checks_the_baseline():
    assert names(plan("AVX512", {"avx512f"}, cores=2, jobs=2)) == ["avx2", "baseline", "2 threads"]
    assert names(plan("AVX2", {"avx2"}, cores=8, jobs=2)) == ["baseline", "1 thread", "8 threads"]
    assert names(plan("DEFAULT", set(), cores=1, jobs=1)) == []


def test_the_pass_reports_an_output_that_holds_on_one_instruction_set_only(tmp_path):
    page = tmp_path / "capability.md"
    native = torch.backends.cpu.get_cpu_capability()
    page.write_text(FIXTURE.read_text().replace("NATIVE", native))
    out = io.StringIO()
    code = portability.main([str(page)], jobs=None, out=out)
    text = out.getvalue()
    cores = portability.os.cpu_count() or 1
    levels = [r.name for r in plan(native, portability.cpu_flags(), cores, cores) if "ATEN_CPU_CAPABILITY" in r.env]
    if not levels:  # nothing below this machine to imitate (not x86, or a baseline CPU)
        assert code == 0, text
        return
    assert code == 1, text
    assert f"FAILED {page}:11 [baseline] output differs" in text
    assert f"-{native}" in text and "+DEFAULT" in text
    assert ":22 [" not in text  # the portable example passes under every run
    assert text.rstrip().split("\n")[-1].startswith("portability: ")


def test_a_portable_page_passes_every_run(tmp_path):
    page = tmp_path / "portable.md"
    text = FIXTURE.read_text()
    shutil.copy(FIXTURE, page)
    page.write_text(
        text[: text.index("```python\nimport torch")]
        + "```python\nimport torch\n```\n"
        + text[text.index("A portable") :]
    )
    out = io.StringIO()
    assert portability.main([str(page)], jobs=None, out=out) == 0, out.getvalue()
    assert "0 failed" in out.getvalue().rstrip().split("\n")[-1]
