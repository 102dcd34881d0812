import pytest

from handbook.verify.compare import diff, matches, matches_on_cuda, normalize_cuda


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("a\nb", "a   \nb\n\n"),  # trailing whitespace and blank lines
        ("\n\na", "a"),
        ("tensor([1, 2, ..., 9])", "tensor([1, 2, 3, 4, 9])"),  # ellipsis within a line
        ("start\n...\nend", "start\nmiddle 1\nmiddle 2\nend"),  # ellipsis across lines
        ("0.33", "0.3333"),  # precision written
        ("tensor([0.3333, 1.])", "tensor([0.33334, 1.0000])"),
        ("1.5e-05", "1.54e-05"),
        ("-0.50", "-0.5012"),
        ("loss ... 0.25", "loss after 3 steps: 0.2512"),
        # one unit in the last digit, where enough digits are written: two correct CPUs round differently
        ("tensor([-0.0040, -0.1587,  0.0000,  2.9960])", "tensor([-0.0041, -0.1587,  0.0000,  2.9959])"),
        ("0.3333", "0.3334"),
        ("12.5", "12.4"),
        ("1.234e-05", "1.235e-05"),
        ("9.999e-06", "1.000e-05"),  # the exponent changes at a rounding boundary: still one unit
        ("0.0000", "-0.0000"),
    ],
)
def test_matches(expected, actual):
    assert matches(expected, actual)


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("a\nb", "a\nc"),
        ("a b", "a  b"),  # whitespace inside a line is significant
        ("0.3333", "0.3335"),  # two units
        ("tensor([-0.0040, 2.9960])", "tensor([-0.0040, 2.9962])"),
        ("0.5", "0.6"),  # too few digits for a one-unit allowance
        ("0.50", "0.51"),
        ("1.5e-05", "1.6e-05"),
        ("0.33", "0.34"),
        ("-1.234", "1.234"),  # wrong sign
        ("-0.0040", "0.0040"),
        ("1.234e-05", "1.234e-06"),  # wrong exponent
        ("1.234e-05", "1.234e+05"),
        ("3", "4"),  # integers are exact
        ("tensor([1, 2, 3])", "tensor([1, 2, 4])"),
        ("torch.Size([2, 3])", "torch.Size([2, 4])"),  # shapes
        ("torch.float32", "torch.float64"),  # dtypes
        ("True", "False"),
        ("2.9", "2.9.1"),
        ("conv2d", "conv3d"),
        ("start\n...\nend", "start\nmiddle"),
        ("2.14.1", "2.15.1"),
        ("", "something"),
    ],
)
def test_mismatches(expected, actual):
    assert not matches(expected, actual)


def test_cuda_spellings_are_normalized_only_on_request():
    cuda = "tensor([1., 2.], device='cuda:0') device(type='cuda', index=0)"
    assert normalize_cuda(cuda) == "tensor([1., 2.]) device(type='cpu')"
    assert not matches("tensor([1., 2.])", "tensor([1., 2.], device='cuda:0')")
    assert matches_on_cuda("tensor([1., 2.])", "tensor([1., 2.], device='cuda:0')")
    assert matches_on_cuda("tensor([1.], device='cuda:0')", "tensor([1.], device='cuda:0')")
    assert matches_on_cuda("[torch.FloatTensor [2]] is at version 1", "[torch.cuda.FloatTensor [2]] is at version 1")
    assert not matches_on_cuda("[torch.FloatTensor [2]]", "[torch.cuda.DoubleTensor [2]]")


def test_diff_is_unified():
    text = diff("a\nb\n", "a\nc\n", "cpu")
    assert "--- expected" in text and "+++ actual (cpu)" in text and "-b" in text and "+c" in text
