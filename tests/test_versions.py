"""The version probe: cached environments, shards, their merge into browser-compat-style data, the rendering."""

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from handbook import ROOT
from handbook.releases import envs, probe, versions
from handbook.site import history
from handbook.verify.document import parse_page

SHARDS = Path(__file__).parent / "fixtures" / "versions"
PAGE = Path(__file__).parent / "fixtures" / "versions-page" / "docs" / "torch" / "fake.md"


def _shards():
    return versions.load_shards(sorted(SHARDS.glob("torch-*.json")))


def _data():
    return versions.merge(_shards())


# ------------------------------------------------------------------------------------------------ environments


def test_old_releases_get_numpy_1_and_their_torchvision():
    assert envs.requirements("2.0.1")[:3] == ["torch==2.0.1", "torchvision==0.15.2", "numpy<2"]
    assert envs.requirements("2.15.0")[:3] == ["torch==2.15.0", "torchvision==0.29.2", "numpy"]
    assert envs.requirements("1.13.1")[:2] == ["torch==1.13.1", "numpy<2"]  # no torchvision wheel for 3.11
    assert "PyYAML==6.0.4" in envs.requirements("2.0.1")  # the tool's own deps at the project's pins


def test_release_numbers_sort_as_numbers():
    assert sorted(["2.10.0", "2.9.1", "1.13.1"], key=envs.key) == ["1.13.1", "2.9.1", "2.10.0"]
    assert versions.probe_order(["1.13.1", "2.0.1", "2.1.2", "2.15.0"]) == ["2.15.0", "1.13.1", "2.1.2", "2.0.1"]


def test_download_size_is_read_from_pip_output():
    out = "Collecting torch==2.0.1\n  Downloading torch-2.0.1-cp311.whl (619.9 MB)\n  Downloading numpy.whl (18.3 MB)\n"
    assert envs.downloaded_bytes(out) == int(619.9e6 + 18.3e6)
    assert envs.downloaded_bytes("Requirement already satisfied: torch\n") == 0


def test_pip_runs_without_the_global_constraint_and_cache():
    env = envs.pip_environment()
    assert env["PIP_CONSTRAINT"] == "/dev/null" and env["PIP_NO_CACHE_DIR"] == "1" and "PYTHONPATH" not in env


# ------------------------------------------------------------------------------------------------ merge


def test_merged_data_follows_its_schema():
    versions.validate(_data())


def test_schema_rejects_bad_data():
    bad = _data()
    bad["apis"]["torch.fake"]["added"] = "1.0 or so"
    with pytest.raises(jsonschema.ValidationError):
        versions.validate(bad)
    bad = _data()
    bad["pages"]["tests/fixtures/versions-page/docs/torch/fake.md"]["examples"][0]["results"]["2.0.1"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        versions.validate(bad)


def test_shards_merged_in_any_order_or_grouping_give_the_same_data():
    shards = _shards()
    one_run = versions.merge(shards)
    assert versions.merge(list(reversed(shards))) == one_run
    assert versions.merge(copy.deepcopy([shards[2], shards[0], shards[1]])) == one_run


def test_two_shards_of_one_release_are_refused():
    shards = _shards()
    with pytest.raises(ValueError):
        versions.merge([shards[0], copy.deepcopy(shards[0])])


def test_added_is_the_first_release_found_in_or_at_most_the_oldest():
    apis = _data()["apis"]
    assert apis["torch.fake"]["added"] == "2.0"  # absent in 1.13.1, present in 2.0.1
    assert apis["torch.old"]["added"] == "≤1.13"  # present in the oldest release probed
    # torchvision was not installed in 1.13.1: unknown there, so the data does not claim 2.0
    assert apis["torchvision.ops.box"]["status"]["1.13.1"] == "unknown"
    assert apis["torchvision.ops.box"]["added"] == "≤2.0"


def test_added_is_a_range_when_the_release_before_was_not_probed():
    shards = [s for s in _shards() if s["release"] != "2.0.1"]
    assert versions.merge(shards)["apis"]["torch.fake"]["added"] == "≤2.1"  # 2.0 was not probed


def test_parameters_added_and_defaults_changed():
    params = _data()["apis"]["torch.old"]["parameters"]
    assert params["keepdim"]["added"] == "2.0"
    assert params["dim"]["defaults"] == [{"since": "≤1.13", "value": "0"}, {"since": "2.0", "value": "1"}]
    assert _data()["apis"]["torch.fake"]["parameters"]["scale"]["added"] == "2.1"


def test_deprecation_is_the_warning_that_names_the_api_not_its_replacement():
    apis = _data()["apis"]
    assert apis["torch.old"]["deprecated"] == {
        "since": "2.1",
        "category": "FutureWarning",
        "message": "torch.old is deprecated, use torch.fake instead",
    }
    # torch.fake's page emits "torch.cuda.amp.thing is deprecated, use torch.amp.fake instead": not about it
    assert "deprecated" not in apis["torch.fake"]


def test_examples_record_where_the_output_is_the_pages_and_why_not():
    first, follow_on, changed = _data()["pages"]["tests/fixtures/versions-page/docs/torch/fake.md"]["examples"]
    assert first["results"]["1.13.1"] == "missing-api"  # AttributeError on a name 1.13 lacks
    assert follow_on["results"]["1.13.1"] == "missing-api"  # NameError of a name that failed block made
    assert changed["same"] == [["2.1.2", "2.1.2"]] and changed["first_differs"] == "1.13.1"
    assert changed["texts"][changed["outputs"]["2.0.1"]] == "tensor([1, 3])\n"


def test_an_error_of_its_own_is_not_taken_for_a_missing_api():
    shard = {"environment": {"torchvision": "0.15.2"}}
    assert versions.outcome({"status": "failed", "error": "RuntimeError: shapes differ"}, [], shard) == "error"
    assert versions.outcome({"status": "failed", "error": "NameError: name 'x' is not defined"}, [], shard) == "error"
    missing = {"status": "failed", "error": "TypeError: f() got an unexpected keyword argument 'scale'"}
    assert versions.outcome(missing, [], shard) == "missing-api"


def test_a_page_changed_since_a_release_was_probed_is_not_compared_there():
    shards = _shards()
    shards[0]["pages"]["tests/fixtures/versions-page/docs/torch/fake.md"]["examples"][2]["code"] = "dddddddddd"
    changed = versions.merge(shards)["pages"]["tests/fixtures/versions-page/docs/torch/fake.md"]["examples"][2]
    assert "1.13.1" not in changed["results"]


# ------------------------------------------------------------------------------------------------ rendering


def test_version_history_section_names_every_release_and_the_changes():
    page = parse_page(PAGE)
    text = "\n".join(history.section(page, _data()))
    assert "## Version history" in text
    # a strip of small cells that wraps (no 17-column table): release, API present, blocks as shown
    assert '<span class="hb-rel hb-rel-absent" title="torch 1.13.1: API absent; 0 of 3 blocks' in text
    assert "<b>2.0</b> ✓ 2/3</span>" in text and "<b>2.1</b> ✓ 3/3</span>" in text and "| torch |" not in text
    assert "**Added**: **2.0** (first found in torch 2.0.1)" in text
    assert "`scale`: added in 2.1" in text
    assert '??? note "Example at line' in text and "On torch 1.13" in text and "tensor([1, 3])" in text
    # missing APIs are counted per release and name the blocks, linked to their anchors on the page
    assert "- On torch 1.13, 2 of 3 use an API that release lacks ([example at line 13](#example-13), " in text
    # a change of outcome between two releases that both have the API is one line
    assert (
        "- **2.1**: the [example at line 29](#example-29) prints or asserts what this page shows; on 2.0, it "
        "printed other output." in text
    )


def test_behaviour_changes_name_the_release_the_block_and_before_after():
    from handbook.verify.document import Example
    from handbook.verify.fences import Options

    ex = Example("p.md", 7, 9, "", "x", "p.md", 8, Options(), kind="check")
    e = {
        "results": {"2.5": "error", "2.6": "same", "2.7": "same"},
        "errors": {"2.5": "AssertionError"},
    }
    found = {"status": {"2.5": "present", "2.6": "present", "2.7": "present"}}
    (line,) = history.behaviour_changes([(0, ex, e)], ["2.5", "2.6", "2.7"], found)
    assert line == (
        "- **2.6**: the [check at line 7](#example-7) prints or asserts what this page shows; on 2.5, it failed: "
        "`AssertionError`."
    )
    # the API appearing is not a behaviour change
    found["status"]["2.5"] = "absent"
    assert history.behaviour_changes([(0, ex, e)], ["2.5", "2.6", "2.7"], found) == []


def test_messages_with_backticks_stay_inline_code():
    assert history.code("You are using `torch.load` now") == "`` You are using `torch.load` now ``"
    assert history.code("plain") == "`plain`"
    assert history.code("x" * 500).endswith("…`") and len(history.code("x" * 500)) == history.MESSAGE_LIMIT + 2


def test_a_page_not_probed_yet_says_so():
    page = parse_page(PAGE)
    data = _data()
    del data["apis"]["torch.fake"]
    assert "Not probed yet" in "\n".join(history.section(page, data))


def test_deprecations_page_lists_what_warns_in_the_newest_release():
    old_page = PAGE.with_name("old.md")
    pages = [parse_page(PAGE), parse_page(old_page)]
    text = history.deprecations_page(pages, PAGE.parents[2], _data())
    (row,) = [line for line in text.split("\n") if line.startswith("| [`torch.")]
    assert row.startswith("| [`torch.old`](docs/torch/old.md) | 2.1 | FutureWarning |")
    assert "torch.old is deprecated, use torch.fake instead" in row
    assert row.endswith("| [`torch.fake`](docs/torch/fake.md) |")  # the replacement, linked to its page


# ------------------------------------------------------------------------------------------------ probe


def test_one_shard_is_the_same_whenever_it_is_made(tmp_path):
    """A shard depends on the release and the pages only: made twice (as two CI jobs would), it is identical."""
    cmd = [sys.executable, "-m", "handbook", "versions", "shard", str(PAGE), "--jobs", "1", "--out"]
    env = {"PYTHONPATH": str(ROOT / "scripts"), "PATH": "/usr/bin:/bin", "HANDBOOK_NO_REEXEC": "1"}
    outs = []
    for name in ("a.json", "b.json"):
        subprocess.run([*cmd, str(tmp_path / name)], check=True, cwd=ROOT, env=env, capture_output=True)
        outs.append(json.loads((tmp_path / name).read_text()))
    assert outs[0] == outs[1]
    (page,) = outs[0]["pages"].values()
    assert [e["status"] for e in page["examples"]] == ["same", "differs", "failed", "ran"]
    assert outs[0]["apis"]["torch.fake"]["present"] is False  # the fixture's API does not exist


def test_every_api_page_of_the_handbook_shows_a_history_naming_every_probed_release():
    from handbook import DOCS
    from handbook.site import nav
    from handbook.site.nav import load_pages

    data = versions.load()
    releases = [history._label(r["release"]) for r in data["releases"]]
    pages = [p for p in load_pages(DOCS) if p.kind == "api"]
    strip = "".join(f"<b>{r}</b>" for r in releases)
    probed = {entry for entry in data.get("apis", {})}
    sections = {p.rel: "\n".join(history.section(p)) for p in pages}
    in_data = [p for p in pages if p.front.get("api") in probed]
    assert in_data, "no api page is in the version data"
    # every page the probe covered names every probed release; a page added after the last probe says so plainly
    cells = {p.rel: "".join(re.findall(r"<b>[^<]+</b>", sections[p.rel])) for p in in_data}
    missing = [p.rel for p in in_data if cells[p.rel] != strip]
    assert not missing, missing[:10]
    unprobed = [p.rel for p in pages if p.front.get("api") not in probed and "Not probed yet" not in sections[p.rel]]
    assert not unprobed, unprobed[:10]
    # the committed data: every minor release from 1.13 to the pinned one
    assert [r["release"] for r in data["releases"]] == list(versions.RELEASES)
    # pages written after the last probe wait for the next one (labelled above); the status page states that debt
    status = nav.verification_page(load_pages(DOCS), {"pages": {}})
    assert f"{len(in_data)} of {len(pages)} api pages are in the version data" in status
    assert f"{len(pages) - len(in_data)} were written after the last probe" in status


def test_the_committed_data_dates_apis_by_the_release_the_probe_first_found_them_in():
    """Spot checks against the release notes: torch.compile is new in 2.0, nn.RMSNorm in 2.4, and an API older
    than the oldest probed release is "≤1.13", never a guessed number."""
    apis = versions.load()["apis"]
    assert apis["torch.compile"]["added"] == "2.0"
    assert apis["torch.nn.RMSNorm"]["added"] == "2.4"
    assert apis["torch.cat"]["added"] == "≤1.13"
    sdpa = apis["torch.nn.functional.scaled_dot_product_attention"]
    assert sdpa["added"] == "2.0"
    assert sdpa["parameters"]["scale"]["added"] == "2.1" and sdpa["parameters"]["enable_gqa"]["added"] == "2.5"


def test_find_links_of_the_machine_are_not_used_for_release_envs():
    """A local CPU wheel of the same release (2.13.0+cpu) would win over the registry's, and its registry
    torchvision fails to import beside it."""
    env = envs.pip_environment()
    assert env["PIP_FIND_LINKS"] == str(envs.EMPTY_FIND_LINKS) and not any(envs.EMPTY_FIND_LINKS.iterdir())


def test_a_warning_is_attributed_to_the_api_that_emits_it_not_every_name_it_mentions():
    message = (
        "You are using `torch.load` with `weights_only=False`. Arbitrary objects will no longer be allowed to be "
        "loaded unless they are explicitly allowlisted by the user via `torch.serialization.add_safe_globals`."
    )
    emitted = {"category": "FutureWarning", "message": message, "origin": "torch/serialization.py:load"}
    assert versions._relevant(emitted, "torch.load", set())
    assert not versions._relevant(emitted, "torch.serialization.add_safe_globals", set())
    unknown = {"category": "FutureWarning", "message": message}  # a shard from before origins were recorded
    assert versions._relevant(unknown, "torch.serialization.add_safe_globals", set())


def test_the_runner_records_which_function_emitted_a_warning(tmp_path):
    from handbook.verify.runner import verify

    page = tmp_path / "w.md"
    page.write_text(
        "---\nkind: guide\n---\n\n# w\n\n```python warns=FutureWarning\nimport warnings\n\ndef old_api():\n"
        '    warnings.warn("old_api is deprecated", FutureWarning)\n\ndef caller():\n    old_api()\n\ncaller()\n```\n\n'
        "```output\nFutureWarning: old_api is deprecated\n```\n"
    )
    (outcome,) = verify([str(page)], devices=("cpu",), use_cache=False, record_path=None).outcomes
    assert outcome.status == "passed"
    assert outcome.warnings == [
        {"category": "FutureWarning", "message": "old_api is deprecated", "origin": f"{page}:old_api"}
    ]
    found = probe.classify(outcome)
    assert found["warnings"] == [
        {"category": "FutureWarning", "message": "old_api is deprecated", "origin": f"{page}:old_api"}
    ]
