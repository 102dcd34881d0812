from pathlib import Path

from handbook.site.search_data import ZWSP, api_field, join_single_han, segment
from handbook.site.search_index import enrich


def test_single_han_characters_never_become_index_keys():
    assert join_single_han(f"{ZWSP}转{ZWSP}成{ZWSP}张量{ZWSP}") == f"{ZWSP}转成{ZWSP}张量{ZWSP}"
    assert join_single_han(f"交换{ZWSP}两个{ZWSP}维度") == f"交换{ZWSP}两个{ZWSP}维度"  # words stay words
    assert join_single_han("numpy 转 tensor") == "numpy   tensor"
    assert join_single_han("plain english") == "plain english"


def test_enrich_adds_api_and_segmented_aliases_to_the_page_entry_only():
    index = {
        "docs": [
            {"location": "torch/cat/", "title": "torch.cat", "text": ""},
            {"location": "torch/cat/#examples", "title": "Examples", "text": ""},
        ]
    }
    data = {
        "aliases": {"torch/cat/": segment(["concatenate", "张量拼接"])},
        "api": {"torch/cat/": api_field("torch.cat")},
    }
    enrich(index, data)
    top, section = index["docs"]
    assert top["api"] == f"torch.cat{ZWSP}cat"
    assert "concatenate" in top["aliases"] and f"张量{ZWSP}拼接" in top["aliases"]
    assert "aliases" not in section and "api" not in section


def test_worker_patch_fixes_the_loop_once_and_refuses_unknown_code(tmp_path):
    """On the pinned theme's own worker: every patch applied once, the handbook's search method installed with the
    theme's kept as themeSearch; a worker missing any piece, or patched already, is refused, never skipped."""
    import shutil

    import material
    import pytest

    from handbook.site.search_index import PREBUILT_PATCHES, WORKER_BUG, WORKER_FIX, WorkerPatchError, patch_worker

    (theme,) = (Path(material.__file__).parent / "templates/assets/javascripts/workers").glob("search.*.min.js")
    workers = tmp_path / "assets" / "javascripts" / "workers"
    workers.mkdir(parents=True)
    worker = workers / theme.name
    shutil.copy(theme, worker)
    patch_worker(tmp_path)
    patched = worker.read_text()
    assert WORKER_BUG not in patched and patched.count(WORKER_FIX) == 1
    assert all(patched.count(new) == 1 for _, new in PREBUILT_PATCHES[:-2])
    assert (
        "case 0:return yield self.__hbIdle(),yield Ie(t.data.config),yield self.__hbLoadAhead(),de=new U(t.data),"
        "self.__search=de," in patched
    )
    assert patched.count("search(e){return self.__hbSearch.call(this,e,{") == 1
    # the pinned reference addresses first (a name with no page links there), then the handbook's search method
    first, rest = patched.split("\n", 1)
    assert first.startswith("self.__hbUpstream={") and rest.startswith("// The handbook's search method")
    assert patched.count("themeSearch(e){") == 1
    with pytest.raises(WorkerPatchError, match="search worker changed"):
        patch_worker(tmp_path)  # already patched, or a new theme version: never silently skipped
    for old, _ in [(WORKER_BUG, None), *PREBUILT_PATCHES, ("e=ce(e),", None)]:
        worker.write_text(theme.read_text().replace(old, "", 1))
        with pytest.raises(WorkerPatchError, match="search worker changed"):
            patch_worker(tmp_path)  # one piece of the theme's code is missing: a new theme version


def test_bundle_patch_sets_up_offline_search_at_page_load_once_and_refuses_unknown_code(tmp_path):
    import shutil

    import material
    import pytest

    from handbook.site.search_index import BUNDLE_PATCHES, WorkerPatchError, patch_bundle

    (theme,) = (Path(material.__file__).parent / "templates/assets/javascripts").glob("bundle.*.min.js")
    folder = tmp_path / "assets" / "javascripts"
    folder.mkdir(parents=True)
    shutil.copy(theme, folder / theme.name)
    patched = patch_bundle(tmp_path).read_text()
    assert all(patched.count(new) == 1 and old not in patched for old, new in BUNDLE_PATCHES)
    with pytest.raises(WorkerPatchError, match="bundle changed"):
        patch_bundle(tmp_path)  # already patched, or a new theme version
