"""HB067: code that looks into the verifier instead of at torch is flagged; ordinary example code is not."""

import pytest

from handbook.lint.introspection import findings

FLAGGED = [
    "import handbook.verify.execute",
    "from handbook.verify import channel",
    "m = __import__('handbook.verify.execute')",
    "import importlib\nm = importlib.import_module('handbook.verify.channel')",
    "import sys\nm = sys.modules['handbook.verify.execute']",
    "import sys\nm = sys.modules.get('handbook')",
    "import sys\nfor name in sys.modules:\n    pass",
    "import sys\nnames = list(sys.modules.values())",
    "import gc\nobjects = gc.get_objects()",
    "from gc import get_referrers",
    "import gc\nwalk = getattr(gc, 'get_objects')",
    "import sys\nframe = sys._getframe(1)",
    "import inspect\nouter = inspect.stack()",
    "def f():\n    pass\nx = f.__code__ and None\nimport sys\ny = sys._getframe().f_back",
    "import os\nos.write(5, b'passed')",
    "import os\nfds = os.listdir('/proc/self/fd')",
]

CLEAN = [
    "import torch\nx = torch.ones(2)\nprint(x)",
    "import gc\ngc.collect()",
    "import sys\nprint(sys.version_info >= (3, 8))",
    "import sys\nprint('torch' in sys.modules)",
    "import os\nos.write(1, b'hello\\n')",
    "import importlib\nnp = importlib.import_module('numpy')",
    "def broken(:\n",  # a syntax error is another check's business
]


@pytest.mark.parametrize("code", FLAGGED)
def test_code_that_looks_into_the_verifier_is_flagged(code):
    assert list(findings(code)), code


@pytest.mark.parametrize("code", CLEAN)
def test_ordinary_example_code_is_not_flagged(code):
    assert list(findings(code)) == [], code
