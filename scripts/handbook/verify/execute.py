"""Run one page's examples inside a forked child: one namespace, seeded, sandboxed.

The warm process (pool.py) forks this from a process that already imported torch, so the child pays no import
cost. The child reports over its own pipe, in frames of JSON (channel.py; never pickles: the warm process must not
run code the child chose), and only when asked: the warm process sends ["run", i, nonce] for each example in turn
and the child answers ["result", i, nonce, {...}]. The child says ["ready"] once it is confined, before any example.
What it prints and raises is judged by the verifier, not here.
"""

from __future__ import annotations

import ast
import builtins
import faulthandler
import io
import ipaddress
import linecache
import os
import random
import re
import reprlib
import resource
import socket
import sys
import time
import traceback
import types
import warnings
from contextlib import contextmanager

from handbook.verify import channel

OUTPUT_LIMIT = 1 << 20  # bytes of one example's output kept (stdout, fd 1 and subprocesses); the rest is cut
# Characters of each field of a result sent to the warm process; a 20 MB exception message is cut, not a dead run.
RESULT_LIMITS = {"output": OUTPUT_LIMIT + (64 << 10), "error": 64 << 10, "stderr": 2000}
REQUEST_LIMIT = 4096  # bytes of one request from the warm process
# Warnings that fail an example unless its fence declares them with warns=.
STRICT_WARNINGS = (DeprecationWarning, FutureWarning, UserWarning)


class NetworkBlocked(ConnectionRefusedError):
    """Raised when an example tries to reach anything but this machine."""


def _is_local(host) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def block_network() -> None:
    """Refuse connections to anything but loopback (gloo process groups on 127.0.0.1 still work)."""
    real_connect, real_connect_ex, real_getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def check(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(address[0]):
            raise NetworkBlocked(
                f"network access is blocked while verifying examples (tried {address[0]}:{address[1]})"
            )

    def connect(sock, address):
        check(sock, address)
        return real_connect(sock, address)

    def connect_ex(sock, address):
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host, *args, **kwargs):
        if not _is_local(host if not isinstance(host, bytes) else host.decode()):
            raise NetworkBlocked(f"network access is blocked while verifying examples (tried to resolve {host})")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # terminal colours and bold, which some torch messages carry
_ADDRESS = re.compile(r"(?<= at )0x[0-9a-f]{6,}\b")  # `<function f at 0x7f...>`, not hex values


def _stable(text: str) -> str:
    """What differs on every run and means nothing to a reader: object addresses and the page's temp folder."""
    text = _ADDRESS.sub("0x...", text)  # '...' then matches any address when compared
    cwd = os.getcwd()
    return text.replace(cwd, "<page folder>") if len(cwd) > 1 else text


_BUILD_PATH = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?")


def _warning_line(w: warnings.WarningMessage) -> str:
    # torch's C++ warnings name a source file of the build machine: not part of what the page shows.
    return f"{w.category.__name__}: {_BUILD_PATH.sub('', str(w.message))}"


def _tail(exc: BaseException, filenames: set[str], limit: int = 8) -> str:
    """The traceback from the example's own frames on, last lines only."""
    frames = traceback.extract_tb(exc.__traceback__)
    while frames and frames[0].filename not in filenames:
        frames = frames[1:]
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    lines = text.rstrip("\n").split("\n")
    return "\n".join(lines[-limit:]) if len(lines) > limit else "\n".join(lines)


_FILE_LINES: dict[str, list[str]] = {}  # per child: each page or script is read once, whatever its examples


def _file_lines(example, source: str) -> list[str]:
    """The whole file's lines (page or script), so code from earlier blocks is quoted too."""
    from handbook import ROOT

    if example.filename not in _FILE_LINES:
        try:
            _FILE_LINES[example.filename] = (ROOT / example.filename).read_text(encoding="utf-8").splitlines(True)
        except OSError:
            return source.splitlines(True)
    return _FILE_LINES[example.filename]


def _compile(example):
    """The example's code object, with the line numbers of its file.

    Compiled as it is, then shifted: padding the source with blank lines (or walking its AST) costs time in the
    example's line number, which made a page of thousands of examples quadratic.
    """
    offset = example.code_line - 1
    try:
        code = compile(example.code, example.filename, "exec")
    except SyntaxError as exc:
        lines = example.code.splitlines(True)
        if exc.lineno is not None and 1 <= exc.lineno <= len(lines):
            exc.text = lines[exc.lineno - 1]  # Python may have read it from the file, at the unshifted line
        if exc.lineno is not None:
            exc.lineno += offset
        if getattr(exc, "end_lineno", None) is not None:
            exc.end_lineno += offset
        raise
    return _shifted(code, offset)


def _shifted(code: types.CodeType, offset: int) -> types.CodeType:
    consts = tuple(_shifted(c, offset) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + offset, co_consts=consts)


# False while checking: a nondeterministic block's timings are not compared, so torch.utils.benchmark runs it on a
# short budget; `verify --update`, which writes the sample a page shows, sets it True and measures in full.
FULL_TIMING = False
QUICK_RUN_TIME = 0.01


@contextmanager
def _quick_timing(enabled: bool):
    if not enabled:
        yield
        return
    from torch.utils.benchmark import Timer

    blocked, adaptive = Timer.blocked_autorange, Timer.adaptive_autorange

    def quick_blocked(self, callback=None, min_run_time=0.2):
        return blocked(self, callback, min_run_time=min(min_run_time, QUICK_RUN_TIME))

    def quick_adaptive(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        return adaptive(self, threshold, min_run_time=QUICK_RUN_TIME, max_run_time=QUICK_RUN_TIME, callback=callback)

    Timer.blocked_autorange, Timer.adaptive_autorange = quick_blocked, quick_adaptive
    try:
        yield
    finally:
        Timer.blocked_autorange, Timer.adaptive_autorange = blocked, adaptive


class Capture:
    """While an example runs, fd 1 and 2 go to memory files: print(), writes straight to the fd and every
    subprocess's output are captured, in the order they happened."""

    def __init__(self):
        self.out, self.err = os.memfd_create("example-stdout"), os.memfd_create("example-stderr")

    def __enter__(self) -> Capture:
        _flush_all()
        for fd in (self.out, self.err):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
        self.saved = os.dup(1), os.dup(2)
        os.dup2(self.out, 1)
        os.dup2(self.err, 2)
        self.streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _unbuffered(1), _unbuffered(2)
        return self

    def __exit__(self, *exc) -> None:
        _flush_all()
        sys.stdout, sys.stderr = self.streams
        for saved, fd in zip(self.saved, (1, 2), strict=True):
            os.dup2(saved, fd)
            os.close(saved)

    @staticmethod
    def read(fd: int, limit: int = OUTPUT_LIMIT) -> str:
        size = os.fstat(fd).st_size
        text = os.pread(fd, min(size, limit), 0).decode("utf-8", errors="replace")
        if size > limit:
            text += f"\n[output cut: {size} bytes in all, the first {limit} kept]\n"
        return text


def _unbuffered(fd: int) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True)


def _flush_all() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def run_example(example, namespace: dict, capture: Capture) -> dict:
    """Execute one example; return what happened (output, error, warnings)."""
    opts = example.options
    source = example.code
    error = None
    raised_line = None
    started = time.perf_counter()
    origins: dict[int, str] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _record_origins(caught, origins, example.filename)
        try:
            # Tracebacks and torch's own error messages quote source lines: give them the page's, wherever we run.
            linecache.cache[example.filename] = (len(source), None, _file_lines(example, source), example.filename)
            code = _compile(example)
            quick = bool(opts.nondeterministic) and not FULL_TIMING
            with capture, _quick_timing(quick):
                exec(code, namespace)
        except BaseException as exc:  # noqa: BLE001 - examples may raise anything, SystemExit included
            if opts.raises and _class_named(type(exc), opts.raises):
                raised_line = f"{type(exc).__name__}: {exc}"
            elif opts.raises:
                error = f"expected {opts.raises}, got {type(exc).__name__}:\n{_tail(exc, {example.filename})}"
            else:
                error = _tail(exc, {example.filename})
    if error is None and raised_line is None and opts.relation:
        error = _relation_error(opts.relation, namespace, asserted=bool(opts.machine) or FULL_TIMING)
    elapsed = time.perf_counter() - started
    output = capture.read(capture.out)
    if example.is_check and error is None and output.strip():
        error = f"a check prints nothing (it asserts what the prose says), but this one printed:\n{output[:2000]}"
    if opts.raises and raised_line is None and error is None:
        error = f"expected {opts.raises} to be raised, but the example finished without it"
    strict = [w for w in caught if issubclass(w.category, STRICT_WARNINGS)]
    declared = [w for w in caught if opts.warns and _class_named(w.category, opts.warns)]
    undeclared = [w for w in strict if w not in declared]
    if error is None and undeclared:
        w = undeclared[0]
        error = f"undeclared warning (declare it with warns={w.category.__name__}):\n{_warning_line(w)}"
    if error is None and opts.warns and not declared:
        error = f"expected a {opts.warns} warning, but none was emitted"
    seen = []
    for w in declared:
        line = _warning_line(w)
        if line not in seen:
            seen.append(line)
    if seen and not example.is_check:
        output += "".join(line + "\n" for line in seen)
    if raised_line is not None and not example.is_check:
        output += raised_line + "\n"
    output = _stable(_ANSI.sub("", output))
    emitted = [
        {
            "category": w.category.__name__,
            "message": _BUILD_PATH.sub("", str(w.message)),
            "origin": origins.get(id(w), ""),
        }
        for w in caught
        if issubclass(w.category, STRICT_WARNINGS)
    ]
    return {
        "output": output,
        "error": error,
        "stderr": capture.read(capture.err)[-2000:],
        "seconds": elapsed,
        "warnings": emitted[:20],
    }


def _relation_error(relation: str, namespace: dict, asserted: bool) -> str | None:
    """Evaluate a timing block's declared relation in the page's namespace once the block has run.

    Asserted only where the timings are real (`verify --update` / `--measure`, and machine= blocks, which always
    measure in full); a check on the short budget only proves the expression evaluates.
    """
    try:
        holds = eval(compile(relation, "<relation>", "eval"), namespace)  # noqa: S307 - the page's own code
    except Exception as exc:  # noqa: BLE001
        return f"relation= {relation!r} cannot be evaluated after the block: {type(exc).__name__}: {exc}"
    if not isinstance(holds, bool) and type(holds).__name__ != "bool_":  # numpy's bool is not a bool
        return f"relation= {relation!r} must be true or false, not {type(holds).__name__}"
    if asserted and not holds:
        names = sorted({n.id for n in ast.walk(ast.parse(relation, mode="eval")) if isinstance(n, ast.Name)})
        shown = "; ".join(f"{n} = {reprlib.repr(namespace[n])}" for n in names if n in namespace)
        return f"the measurement contradicts the page: relation {relation!r} is false ({shown})"
    return None


def _record_origins(log: list, origins: dict[int, str], filename: str) -> None:
    """Remember, for each warning, the function the example called that led to it: the first frame below the
    example's own code (`load` in torch/serialization.py for torch.load's warning). The version probe attributes a
    warning to the API that emits it, not to every name its text mentions."""
    append = log.append

    def keep(message) -> None:
        append(message)
        stack = [f for f in traceback.extract_stack()[:-1] if f.filename != warnings.__file__]
        for i, frame in enumerate(stack):  # the innermost call from the example's code wins
            if frame.filename == filename and i + 1 < len(stack):
                origins[id(message)] = f"{stack[i + 1].filename}:{stack[i + 1].name}"

    warnings._showwarnmsg_impl = keep  # what catch_warnings(record=True) installed: log.append, in CPython 3.11


def _class_named(cls: type, name: str) -> bool:
    """cls or one of its bases is called `name` (plain or module-qualified): for raises= and warns=."""
    return any(name in (c.__name__, f"{c.__module__}.{c.__qualname__}") for c in cls.__mro__)


def runnable(page, device: str) -> list[int]:
    """Indices of the examples the child runs, in order: the parent expects exactly these results."""
    return [i for i, ex in enumerate(page.examples) if not ex.error and not ex.options.skip and ex.runs_on(device)]


def _capped(result: dict) -> dict:
    for key, limit in RESULT_LIMITS.items():
        text = result.get(key)
        if isinstance(text, str) and len(text) > limit:
            result[key] = text[:limit] + f"\n[{key} cut: {len(text)} characters in all, the first {limit} kept]\n"
    return result


def child_main(page, device: str, ctl: int, out: int, log: int, threads: int, memory_limit, confine) -> None:
    """Entry point of the forked child. Never returns normally: exits with os._exit.

    `confine()` enters the sandbox and returns the page's working folder; if it raises, no example runs and the
    child exits with sandbox.SETUP_FAILED, its reason in the log. ctl: requests from the warm process; out: the
    child's answers; log: its stdout and stderr outside examples (faulthandler's dumps too)."""
    from handbook.verify.sandbox import SETUP_FAILED

    os.dup2(log, 1)
    os.dup2(log, 2)
    faulthandler.enable()
    code = 0
    try:
        try:
            work = confine()
        except BaseException:  # noqa: BLE001 - whatever failed, the page must not run
            traceback.print_exc()
            code = SETUP_FAILED
            return
        os.chdir(work)
        if memory_limit:
            resource.setrlimit(resource.RLIMIT_DATA, (memory_limit, memory_limit))
        block_network()  # a clear message; the network namespace is what really holds
        code = serve(page, device, threads, ctl, out)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 70
    finally:
        _flush_all()
        os._exit(code)


def serve(page, device: str, threads: int, ctl: int, out: int) -> int:
    """Run the examples the warm process asks for, one at a time, until it stops asking (then 0)."""
    import numpy
    import torch

    torch.set_num_threads(threads)
    random.seed(0)
    numpy.random.seed(0)
    if device == "cpu":
        # What torch.manual_seed does where no GPU is visible, without queueing a CUDA seeding that records the
        # call's stack (3 ms a page here).
        torch.default_generator.manual_seed(0)
    else:
        torch.manual_seed(0)
    main = types.ModuleType("__main__")
    main.__dict__.update({"__builtins__": builtins, "__file__": page.rel, "device": torch.device(device)})
    sys.modules["__main__"] = main
    sys.argv = [page.rel]
    # Quoted source lines come from what the verifier parsed: the page's root need not hold the page.
    _FILE_LINES[page.rel] = page.text.splitlines(True)
    for example in page.examples:
        if example.include:
            _FILE_LINES[example.filename] = example.code.splitlines(True)
    capture = Capture()
    channel.send(out, ["ready"])
    while True:
        try:
            kind, i, nonce = channel.receive(ctl, REQUEST_LIMIT)
        except EOFError:
            return 0
        if kind != "run":
            return 70
        result = _capped(run_example(page.examples[i], main.__dict__, capture))
        channel.send(out, ["result", i, nonce, result])
