import pytest

from handbook.verify.fences import FenceError, OutputHeader, parse_options, parse_output_header, split_info


def test_defaults():
    opts = parse_options([])
    assert opts.devices == ("cpu", "cuda") and opts.timeout == 60 and opts.raises is None


def test_all_options():
    lang, words = split_info('python devices=cuda raises=torch.OutOfMemoryError timeout=5 skip="needs data"')
    opts = parse_options(words)
    assert lang == "python"
    assert opts.devices == ("cuda",)
    assert opts.raises == "torch.OutOfMemoryError"
    assert opts.timeout == 5.0
    assert opts.skip == "needs data"


def test_id_option():
    assert parse_options(["id=np-concatenate"]).id == "np-concatenate"


def test_devices_are_ordered_and_deduplicated():
    assert parse_options(["devices=cuda,cpu"]).devices == ("cpu", "cuda")


@pytest.mark.parametrize(
    "words, message",
    [
        (["device=cpu"], "unknown fence option 'device'"),
        (["devices=tpu"], "devices must be"),
        (["timeout=-1"], "timeout must be a positive"),
        (["timeout=soon"], "timeout must be a positive"),
        (["timeout=inf"], "at most 3600"),
        (["timeout=nan"], "at most 3600"),
        (["timeout=1e308"], "at most 3600"),
        (["timeout=3601"], "at most 3600"),
        (["raises=not", "a"], "needs a value"),
        (["raises=1Error"], "needs an exception class name"),
        (["skip"], "needs a value"),
        (["skip=a", "skip=b"], "given twice"),
        (["raises=ValueError", "nondeterministic=x"], "cannot be combined"),
        (["id=Not_Valid"], "id= takes lowercase"),
    ],
)
def test_bad_options(words, message):
    with pytest.raises(FenceError, match=message):
        parse_options(words)


def test_unreadable_quotes():
    with pytest.raises(FenceError, match="unreadable"):
        split_info('python skip="open')


def test_output_headers():
    assert parse_output_header([]) == OutputHeader()
    assert parse_output_header(["cuda"]).label == "cuda"
    h = parse_output_header(["cuda", "sample=CPU · x · 2026-11-30", "code=abc"])
    assert (h.label, h.sample, h.code) == ("cuda", "CPU · x · 2026-11-30", "abc")
    assert h.fence_words() == 'output cuda sample="CPU · x · 2026-11-30" code=abc'
    for bad in (["cpu"], ["sample=x"], ["code=abc"], ["cuda", "cuda"], ["sample=a", "sample=b", "code=c"]):
        with pytest.raises(FenceError):
            parse_output_header(bad)
