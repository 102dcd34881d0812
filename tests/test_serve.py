"""The benchmark server: text gzip-compressed when the client accepts it, as static hosts serve a site."""

import gzip
import urllib.request

from handbook.bench.browser import serve


def _get(url, gzip_ok):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
    with urllib.request.urlopen(request) as response:  # loopback only
        return response.headers.get("Content-Encoding"), response.read()


def test_text_is_compressed_only_when_accepted_and_only_when_asked(tmp_path):
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "index.html").write_text("<p>" + "tensor " * 500 + "</p>", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG" + bytes(100))
    with serve(tmp_path, compress=True) as base:
        encoding, body = _get(base + "page/", gzip_ok=True)
        assert encoding == "gzip" and gzip.decompress(body).startswith(b"<p>tensor")
        assert len(body) < 200
        assert _get(base + "page/", gzip_ok=False) == (None, ("<p>" + "tensor " * 500 + "</p>").encode())
        assert _get(base + "image.png", gzip_ok=True)[0] is None  # not text
    with serve(tmp_path) as base:
        assert _get(base + "page/", gzip_ok=True)[0] is None  # the tests' server stays plain
