"""The built site's link checker: what a browser would reach, and anchors."""

from handbook.site.linkcheck import check


def _site(tmp_path, pages: dict[str, str]):
    for rel, body in pages.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><body>{body}</body></html>")
    return tmp_path


def test_links_from_the_root_clamp_at_it_as_a_browser_does_and_missing_targets_fail(tmp_path):
    site = _site(
        tmp_path,
        {
            "index.html": '<h1 id="top">x</h1>',
            "zh/index.html": "",
            "zh/404.html": '<a href="/../">en</a><a href="/../zh/">zh</a><a href="/nope/">x</a>',
            "a/index.html": '<a href="../#top">ok</a><a href="../#gone">bad</a>',
        },
    )
    assert sorted(p.split(": ", 1)[1] for p in check(site)) == ["broken link '/nope/'", "missing anchor '../#gone'"]
