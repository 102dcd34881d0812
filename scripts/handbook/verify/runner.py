"""`python -m handbook verify`: run every example, compare its output, record the result."""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from handbook.verify import execute, machine, record
from handbook.verify.cache import CACHE, Cache
from handbook.verify.compare import diff, matches, matches_on_cuda
from handbook.verify.document import Example, Page, collect, parse_page
from handbook.verify.fences import DEVICES
from handbook.verify.pool import Job, fork_context
from handbook.verify.sandbox import contains_secret, secret_values
from handbook.verify.update import BLOCK_LIMIT, PageChanged, plan, refusal, rewrite, write_page
from handbook.verify.warm import cpu_label, run_jobs, start_process

NO_GPU = "cuda: no GPU"
SLOWEST = 10  # pages listed at the end of a report, with their times


@dataclass
class Outcome:
    example: Example
    device: str
    status: str  # passed | failed | skipped
    reason: str = ""
    detail: str = ""
    actual: str | None = None
    mismatch: bool = False  # failed only because the output differs: --update can fix it
    cached: bool = False
    warnings: list = field(default_factory=list)  # {category, message, origin}: what the version probe keeps


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    pages_run: int = 0
    pages_cached: int = 0
    seconds: float = 0.0
    jobs: list[Job] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # `path:line: CODE message` of pages that cannot be read
    refusals: list[str] = field(default_factory=list)  # what --update would not write, and why

    def count(self, status: str, device: str | None = None) -> int:
        return sum(1 for o in self.outcomes if o.status == status and (device is None or o.device == device))

    @property
    def failed(self) -> int:
        return self.count("failed") + len(self.unreadable) + len(self.refusals)


def shard_of(pages: list[Page], index: int, count: int) -> list[Page]:
    """The pages shard `index` of `count` runs (1-based): every page in exactly one shard, whatever machine computes
    it. Pages go, most examples first, to the shard with the fewest examples so far, so shards take similar time."""
    if not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: the index must be between 1 and {count}")
    load = [0] * count
    mine = set()
    for page in sorted(pages, key=lambda p: (-len(p.examples), p.rel)):
        lightest = min(range(count), key=lambda i: (load[i], i))
        load[lightest] += len(page.examples) or 1
        if lightest == index - 1:
            mine.add(page.rel)
    return [p for p in pages if p.rel in mine]


def probe_gpu() -> str | None:
    """The GPU's name, or None. Asked in a forked child so that this process never initialises CUDA."""
    if not any(Path("/dev").glob("nvidia*")) and not Path("/proc/driver/nvidia").exists():
        return None  # no NVIDIA driver on this machine: no need to import torch to know
    recv, send = fork_context.Pipe(duplex=False)
    child = fork_context.Process(target=_probe, args=(send,))
    child.start()
    send.close()
    name = recv.recv() if recv.poll(120) else None
    child.join(10)
    return name


def _probe(conn) -> None:
    import torch

    conn.send(torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)


def _not_run(example: Example, device: str) -> Outcome | None:
    """The outcome of an example that does not run on this device, or None if it runs."""
    if example.error:
        return Outcome(example, device, "failed", "cannot run", example.error)
    if example.options.skip:
        return Outcome(example, device, "skipped", f"skip: {example.options.skip}")
    if not example.runs_on(device):
        return Outcome(example, device, "skipped", f"devices={','.join(example.options.devices)}")
    return None


def evaluate(
    page: Page, device: str, job: Job | None, cached: bool = False, gpu_missing: bool = False
) -> list[Outcome]:
    outcomes = []
    for i, ex in enumerate(page.examples):
        static = _not_run(ex, device)
        if static is not None:
            outcomes.append(static)
        elif gpu_missing:
            outcomes.append(Outcome(ex, device, "skipped", NO_GPU))
        elif cached:
            outcomes.append(Outcome(ex, device, "passed", "cached", cached=True))
        elif job is not None and i in job.results:
            outcomes.append(_judge(ex, device, job.results[i]))
        elif job is not None and job.aborted_at == i:
            outcomes.append(Outcome(ex, device, "failed", job.aborted.split("\n")[0], job.aborted))
        else:
            where = page.examples[job.aborted_at].name if job and job.aborted_at is not None else "an earlier failure"
            outcomes.append(Outcome(ex, device, "failed", f"not run: the page's process stopped at {where}"))
    return outcomes


def _judge(ex: Example, device: str, result: dict) -> Outcome:
    outcome = _verdict(ex, device, result)
    emitted = result.get("warnings")
    if isinstance(emitted, list):
        outcome.warnings = [w for w in emitted if isinstance(w, dict)][:20]
    return outcome


def _verdict(ex: Example, device: str, result: dict) -> Outcome:
    actual = result["output"]
    if result["error"] and ex.is_check:
        detail = result["error"] + (f"\nthe claim: {ex.claim}" if ex.claim else "")
        return Outcome(ex, device, "failed", "check failed: " + _headline(result["error"]), detail, actual)
    if result["error"]:
        return Outcome(ex, device, "failed", result["error"].split("\n")[0], result["error"], actual)
    if ex.options.machine:  # runs, must not raise; its output is recorded for this machine, never compared
        return Outcome(ex, device, "passed", "machine-dependent", actual=actual)
    if ex.options.nondeterministic:
        block = ex.sample_block(device)
        stale = stale_sample(block)
        if stale is None and (
            (block is not None and block.header.code == ex.code_hash) or (block is None and not actual.strip())
        ):
            return Outcome(ex, device, "passed", "nondeterministic", actual=actual)
        why = (
            "has no sample output"
            if block is None
            else f"sample output was measured with torch {stale}"
            if stale
            else "sample output was not measured with this code"
        )
        return Outcome(ex, device, "failed", f"{why} (run verify --update)", actual=actual, mismatch=True)
    expected = ex.expected(device)
    shared_only = device == "cuda" and ex.cuda_output is None
    ok = matches_on_cuda(expected, actual) if shared_only else matches(expected, actual)
    if ok:
        return Outcome(ex, device, "passed", actual=actual)
    headline = "output differs" if expected.strip() else "prints output but has no output block"
    return Outcome(ex, device, "failed", headline, diff(expected, actual, device), actual, mismatch=True)


def _headline(error: str) -> str:
    """One line for a report: a traceback's exception line, else the error's first line."""
    lines = [line for line in error.split("\n") if line.strip()] or [""]
    return (lines[-1] if lines[0].startswith(("  File", "Traceback")) else lines[0]).strip()[:300]


_SAMPLE_TORCH = re.compile(r"\btorch (\S+)")


def stale_sample(block) -> str | None:
    """The torch release a sample was measured with, when it is not the installed one: a sample from another
    release (timings, versions) is re-measured by --update like a changed output. None when current or unnamed."""
    if block is None or not block.header.sample:
        return None
    m = _SAMPLE_TORCH.search(block.header.sample)
    return m.group(1) if m and m.group(1) != record.environment()["torch"] else None


class Progress:
    """A progress bar on a terminal; one line per finished page otherwise."""

    def __init__(self, total: int, stream):
        self.total, self.done, self.stream = total, 0, stream
        self.bar = None
        if sys.stdout.isatty() and total:
            from rich.progress import Progress as RichProgress

            self.bar = RichProgress(transient=True)
            self.bar.start()
            self.task = self.bar.add_task("verifying", total=total)

    def advance(self, job: Job, outcomes: list[Outcome]) -> None:
        self.done += 1
        counts = Counter(o.status for o in outcomes)
        if self.bar:
            self.bar.update(self.task, advance=1, description=job.page.rel)
        else:
            summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            print(
                f"[{self.done}/{self.total}] {job.page.rel} [{job.device}] {summary} ({job.wall_seconds:.1f} s)",
                file=self.stream,
            )

    def close(self) -> None:
        if self.bar:
            self.bar.stop()


def verify(
    paths: list[str] | None = None,
    devices: tuple[str, ...] = DEVICES,
    update: bool = False,
    jobs: int | None = None,
    use_cache: bool = True,
    record_path: Path | None = record.RECORD,
    memory_limit: int | None = 6 * 2**30,
    stream=None,
    cache_path: Path | None = None,
    block_limit: int = BLOCK_LIMIT,
    measure: bool = False,
    shard: tuple[int, int] | None = None,
) -> Report:
    started = time.perf_counter()
    if not use_cache:
        start_process()  # every page will run: the warm process imports torch while pages are read
    pages = [parse_page(p) for p in collect(paths)]
    if shard is not None:
        pages = shard_of(pages, *shard)
    report = Report()
    report.unreadable = [f"{p.rel}:{x.line}: {x.code} {x.message}" for p in pages if p.unreadable for x in p.problems]
    pages = [p for p in pages if not p.unreadable]
    env = record.environment()
    gpu = probe_gpu() if "cuda" in devices else None
    # The CPU's label keys the cache; when this machine's is known, a run whose pages are all cached never starts
    # the warm process (its torch import is most of a cached run's time).
    machines = {"cpu": machine.known_cpu_label() or cpu_label(), "cuda": gpu or "no GPU"}
    cache = Cache(cache_path or CACHE, enabled=use_cache, machine=machines["cpu"])
    planned: dict[tuple[str, str], list[Outcome]] = {}
    to_run: list[Job] = []
    for page in pages:
        for device in devices:
            runnable = [ex for ex in page.examples if _not_run(ex, device) is None]
            if device == "cuda" and gpu is None:
                planned[page.rel, device] = evaluate(page, device, None, gpu_missing=True)
            elif runnable and cache.hit(page, device, env):
                planned[page.rel, device] = evaluate(page, device, None, cached=True)
                report.pages_cached += 1
            elif runnable:
                to_run.append(Job(page, device))
            else:
                planned[page.rel, device] = evaluate(page, device, None)
    progress = Progress(len(to_run), stream or sys.stderr)

    def done(job: Job) -> None:
        planned[job.page.rel, job.device] = evaluate(job.page, job.device, job)
        if measure:  # every sample is written again from this full measurement
            for o in planned[job.page.rel, job.device]:
                o.mismatch = o.mismatch or (o.status == "passed" and bool(o.example.options.nondeterministic))
        progress.advance(job, planned[job.page.rel, job.device])

    execute.FULL_TIMING = update  # samples written to a page are measured in full; checks run timings short
    try:
        if to_run:
            run_jobs(to_run, workers=jobs or _default_jobs(), memory_limit=memory_limit, on_done=done)
    finally:
        progress.close()
    report.jobs, report.pages_run = to_run, len(to_run)
    by_job = {(j.page.rel, j.device): j for j in to_run}
    secrets = secret_values()  # held here only: the warm process and the pages never had them
    if update:
        provenance = sample_provenance(env, machines)
        guard = (block_limit, secrets)
        pages = [_apply_update(page, devices, planned, by_job, report, provenance, guard) for page in pages]
    results: dict[tuple[str, str], tuple[str, dict]] = {}  # (page, device) -> (examples hash, counts)
    outputs: dict[str, dict] = {}  # page -> machine-dependent outputs, for the record
    for page in pages:
        for device in devices:
            outcomes = planned[page.rel, device]
            report.outcomes.extend(outcomes)
            counts = Counter(o.status for o in outcomes)
            counts = {k: counts.get(k, 0) for k in ("passed", "failed", "skipped")}
            ran = (page.rel, device) in by_job or any(o.cached for o in outcomes)
            if ran:
                cache.store(page, device, env, passed=not counts["failed"])
            recordable = record_path is not None and page.path.is_relative_to(record_path.parent)
            if recordable and (ran or (device == "cpu" and page.examples)):
                results[page.rel, device] = (page.examples_hash, counts)
            if recordable:
                _machine_outputs(page, device, outcomes, outputs, secrets, report)
    if record_path is not None:
        # a full run forgets pages that no longer exist
        alive = {p.rel for p in pages} if paths is None and shard is None else None
        record.update(record_path, results, env, machines, alive, outputs)
    cache.save()
    report.seconds = time.perf_counter() - started
    return report


def _machine_outputs(
    page: Page, device: str, outcomes: list[Outcome], outputs: dict[str, dict], secrets, report
) -> None:
    found = outputs.setdefault(page.rel, {"live": [e.code_hash for e in page.examples if e.options.machine]})
    if not found["live"]:
        del outputs[page.rel]
        return
    for o in outcomes:
        if o.example.options.machine and o.status == "passed" and o.actual is not None:
            if contains_secret(o.actual, secrets):  # the record is committed: a value there is published
                report.refusals.append(
                    f"{o.example.name} [{device}]: not recorded: output contains the value of one of your "
                    "environment variables"
                )
                continue
            found.setdefault(o.example.code_hash, {})[device] = o.actual


def sample_provenance(env: dict, machines: dict[str, str]) -> dict[str, str]:
    """Where and when a nondeterministic sample was measured, as its output fence records it."""
    import datetime
    import os

    today = datetime.date.today().isoformat()
    return {
        "cpu": f"CPU · {machines['cpu']} · {os.cpu_count()} cores · torch {env['torch']} · {today}",
        "cuda": f"CUDA · {machines['cuda']} · torch {env['torch']} · {today}",
    }


def _default_jobs() -> int:
    import os

    return os.cpu_count() or 1


def _apply_update(page: Page, devices, planned, by_job, report: Report, provenance, guard) -> Page:
    actual: dict[int, dict[str, str]] = {}
    for device in devices:
        for i, outcome in enumerate(planned[page.rel, device]):
            if outcome.mismatch:
                why = refusal(outcome.actual, *guard)
                if why:
                    report.refusals.append(f"{outcome.example.name} [{device}]: not updated: {why}")
                else:
                    actual.setdefault(i, {})[device] = outcome.actual
    if not actual:
        return page
    if page.unsafe_to_rewrite:
        for problem in page.unsafe_to_rewrite:
            report.refusals.append(f"{page.rel}:{problem.line}: not updated: {problem.code} {problem.message}")
        return page
    plans = {i: plan(page.examples[i], outs, provenance) for i, outs in actual.items()}
    text, changes = rewrite(page.text, page.examples, plans)
    if text == page.text:
        return page
    try:
        write_page(page, text)
    except PageChanged:
        report.refusals.append(f"{page.rel}: not updated: the file changed since it was read; run --update again")
        return page
    report.changes.extend(changes)
    new = parse_page(page.path)
    for device in devices:
        job = by_job.get((page.rel, device))
        if job is not None:
            planned[page.rel, device] = evaluate(new, device, job)
    return new


def write_results(report: Report, path: Path, env: dict) -> None:
    """Every outcome as JSON, for tools that compare runs (the portability pass, upgrades)."""
    import json

    rows = [
        {
            "name": o.example.name,
            "device": o.device,
            "status": o.status,
            "reason": o.reason,
            "code": o.example.code_hash,
            "expected": o.example.expected(o.device),
            "actual": o.actual,
            "detail": o.detail,
        }
        for o in report.outcomes
    ]
    data = {"environment": env, "examples": rows}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def print_report(report: Report, devices, out=None) -> None:
    out = out or sys.stdout
    for line in report.unreadable:
        print(f"FAILED {line}", file=out)
    for o in report.outcomes:
        if o.status == "failed":
            print(f"FAILED {o.example.name} [{o.device}] {o.reason}", file=out)
            if o.detail and o.detail != o.reason:
                print("\n".join("    " + line for line in o.detail.split("\n")), file=out)
    for change in report.changes:
        print(f"updated {change}", file=out)
    for refused in report.refusals:
        print(f"REFUSED {refused}", file=out)
    for device in devices:
        reasons = Counter(o.reason for o in report.outcomes if o.device == device and o.status == "skipped")
        why = "; ".join(f"{n} × {r}" for r, n in reasons.most_common())
        print(
            f"{device}: {report.count('passed', device)} passed, {report.count('failed', device)} failed, "
            f"{report.count('skipped', device)} skipped" + (f" ({why})" if why else ""),
            file=out,
        )
    slowest = sorted(report.jobs, key=lambda j: j.wall_seconds, reverse=True)[:SLOWEST]
    if slowest:
        print(f"slowest pages ({len(slowest)} of {len(report.jobs)} run):", file=out)
        for job in slowest:
            print(f"  {job.wall_seconds:6.1f} s  {job.page.rel} [{job.device}]", file=out)
    print(f"pages run: {report.pages_run}, from cache: {report.pages_cached}; {report.seconds:.1f} s", file=out)
    print(f"{report.count('passed')} passed, {report.failed} failed, {report.count('skipped')} skipped", file=out)
