"""Command line: python -m handbook {lint,verify,upgrade,bench,codes,...}.

Each command is one small function below; they import their stage when called, so that a command never pays for
another's imports (a cached `verify` must not import torch or the site builder).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from handbook.verify.fences import DEVICES


def _shard(text: str) -> tuple[int, int]:
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit()) or not 1 <= int(index) <= int(count):
        raise argparse.ArgumentTypeError(f"{text!r}: expected I/N with 1 <= I <= N, e.g. 2/4")
    return int(index), int(count)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m handbook", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    v = sub.add_parser("verify", help="run every example and compare its output")
    v.add_argument("paths", nargs="*", help="pages or folders (default: docs/)")
    v.add_argument("--update", action="store_true", help="rewrite expected-output blocks from the actual output")
    v.add_argument(
        "--measure",
        action="store_true",
        help="measure every timing sample again in full and rewrite it (implies --update, --no-cache); a sample "
        "whose declared relation= is false is not written",
    )
    v.add_argument("--device", choices=[*DEVICES, "all"], default="all")
    v.add_argument("--jobs", type=int, default=None, help="pages run at once (default: number of cores)")
    v.add_argument("--no-cache", action="store_true", help="run every page, even unchanged ones")
    v.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="run only shard I of N (1-based) of the pages, for CI runners; merge their records with merge-records",
    )
    v.add_argument("--no-record", action="store_true", help="do not write docs/verification.json")
    v.add_argument("--results", metavar="PATH", help="also write every example's outcome and output as JSON")
    v.add_argument(
        "--portability",
        action="store_true",
        help="re-run the CPU pass under each lower instruction-set level and another thread count; report changes",
    )
    v.add_argument(
        "--max-output",
        type=int,
        default=None,
        metavar="BYTES",
        help="largest captured output --update writes into one block (default 65536)",
    )

    lint = sub.add_parser("lint", help="check front matter, tags, sections, signatures and links")
    lint.add_argument("paths", nargs="*", help="pages or folders (default: docs/)")

    cl = sub.add_parser("claims", help="claim findings (HB100-HB105) of every page, audited or not, and the audit")
    cl.add_argument("paths", nargs="*", help="pages or folders (default: docs/)")

    us = sub.add_parser("usage", help="rank torch APIs by the files of a body of code that use them; page coverage")
    us.add_argument("paths", nargs="+", help="folders or files of Python code and notebooks")
    us.add_argument("--write", action="store_true", help="store the ranking in usage/ranking.json")
    us.add_argument("--top", type=int, default=40, help="rows to print")

    tr = sub.add_parser(
        "i18n", help="translations: update the PO files from the English pages, or list what is not current"
    )
    tr.add_argument("action", choices=["update", "status"])
    tr.add_argument("paths", nargs="*", help="pages or folders (default: docs/)")
    tr.add_argument("--language", default="zh")
    tr.add_argument("--untranslated", action="store_true", help="status: list untranslated paragraphs too")

    sub.add_parser("codes", help="list the lint codes")

    b = sub.add_parser("bench", help="measure per-page isolation overhead against a fresh process per page")
    b.add_argument("paths", nargs="*")
    b.add_argument("--repeat", type=int, default=3)
    b.add_argument("--scaling", action="store_true", help="verify time of pages of 1000-8000 tiny examples")

    m = sub.add_parser("merge-records", help="merge verification records written on other machines into docs/")
    m.add_argument("records", nargs="+", help="verification.json files to merge in")

    u = sub.add_parser("upgrade", help="what moving to another torch release changes: a changes report")
    u.add_argument("version", help="the candidate torch release, e.g. 2.16.0")
    u.add_argument("--torchvision", help="the candidate's torchvision (default: the envs.TORCHVISION table)")
    u.add_argument("--from", dest="baseline", metavar="VERSION", help="baseline release (default: the project's)")
    u.add_argument("--out", help="report folder (default: .handbook-envs/reports/torch-OLD-to-NEW/)")
    u.add_argument("--jobs", type=int, default=None, help="pages run at once by each verify")
    u.add_argument("--prune", action="store_true", help="remove the environments it created once done")
    u.add_argument("paths", nargs="*", help="pages or folders (default: docs/)")

    r = sub.add_parser("render", help="write every page's final Markdown, the generated pages and the site config")
    r.add_argument("--out", help="build folder (default: build/): docs/, mkdocs.yml, zensical.yml, search-data.json")
    r.add_argument("--offline", action="store_true", help="render for the offline copy (no directory URLs)")

    o = sub.add_parser("offline", help="build the offline copy and zip it into site/download/")
    o.add_argument(
        "--generator",
        choices=["mkdocs", "zensical"],
        default="mkdocs",
        help="zensical: into build/site-zensical/download/",
    )
    sub.add_parser("sitebench", help="site build time, search latency in Chromium, index and zip sizes")
    lh = sub.add_parser("lighthouse", help="Lighthouse scores of the home page and five api pages of a built site")
    lh.add_argument("site", help="the built site folder")
    lh.add_argument("--lighthouse", help="the lighthouse binary (npm package; default: on PATH)")
    lc = sub.add_parser("linkcheck", help="check every internal link and anchor of the built site")
    lc.add_argument("site", nargs="?", help="the built site folder (default: site/)")

    from handbook.releases.versions import add_parser as add_versions

    add_versions(sub)
    return parser


def _verify(args) -> int:
    if args.portability:
        from handbook.verify.portability import main as portability_main

        return portability_main(args.paths or None, args.jobs)
    import signal

    from handbook.verify import record, warm
    from handbook.verify.paths import UnsafePath
    from handbook.verify.runner import print_report, verify, write_results

    # SIGTERM unwinds like Ctrl-C, so every page's processes are ended on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    devices = DEVICES if args.device == "all" else (args.device,)
    try:
        report = verify(
            args.paths or None,
            devices=devices,
            update=args.update or args.measure,
            measure=args.measure,
            jobs=args.jobs,
            use_cache=not (args.no_cache or args.measure),
            record_path=None if args.no_record else record.RECORD,
            shard=args.shard,
            **({"block_limit": args.max_output} if args.max_output else {}),
        )
    except (FileNotFoundError, UnsafePath) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        warm.stop()
    print_report(report, devices)
    if args.results:
        write_results(report, Path(args.results), record.environment())
    return 1 if report.failed else 0


def _lint(args) -> int:
    from handbook.lint.rules import main as lint_main

    return lint_main(args.paths or None)


def _claims(args) -> int:
    from handbook.lint.claims import main as claims_main

    return claims_main(args.paths or None)


def _usage(args) -> int:
    from handbook.usage.rank import main as usage_main

    return usage_main(args.paths, write=args.write, top=args.top)


def _i18n(args) -> int:
    from handbook.i18n import cli as i18n_cli

    if args.action == "update":
        return i18n_cli.update(args.paths or None, args.language)
    return i18n_cli.status(args.paths or None, args.language, args.untranslated)


def _codes(args) -> int:
    from handbook.lint.rules import CODES

    for code, meaning in sorted(CODES.items()):
        print(f"{code}  {meaning}")
    return 0


def _merge_records(args) -> int:
    from handbook.verify import record

    try:
        merged = record.merge_files([Path(p) for p in args.records])
    except record.NotARecord as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    machines = {m for p in merged["pages"].values() for d in ("cpu", "cuda") for m in record.by_machine(p.get(d, {}))}
    print(
        f"merged {len(args.records)} record(s): {len(merged['pages'])} pages, machines: {', '.join(sorted(machines))}"
    )
    return 0


def _upgrade(args) -> int:
    from handbook.releases.upgrade import main as upgrade_main

    return upgrade_main(
        args.version, args.torchvision, args.baseline, args.out, args.paths or None, args.jobs, args.prune
    )


def _render(args) -> int:
    from handbook.site.build import main as render_main

    return render_main(args.out, args.offline)


def _offline(args) -> int:
    from handbook.site.offline import main as offline_main

    return offline_main(args.generator)


def _sitebench(args) -> int:
    from handbook.bench.sitebench import main as sitebench_main

    return sitebench_main()


def _lighthouse(args) -> int:
    from handbook.bench.lighthouse import main as lighthouse_main

    return lighthouse_main(args.site, args.lighthouse)


def _linkcheck(args) -> int:
    from handbook.site.linkcheck import main as linkcheck_main

    return linkcheck_main(args.site)


def _versions(args) -> int:
    from handbook.releases.versions import main as versions_main

    return versions_main(args)


def _bench(args) -> int:
    from handbook.bench.isolation import main as bench_main
    from handbook.bench.isolation import scaling

    return scaling() if args.scaling else bench_main(args.paths or None, args.repeat)


COMMANDS = {
    "verify": _verify,
    "lint": _lint,
    "claims": _claims,
    "usage": _usage,
    "i18n": _i18n,
    "codes": _codes,
    "merge-records": _merge_records,
    "upgrade": _upgrade,
    "render": _render,
    "offline": _offline,
    "sitebench": _sitebench,
    "lighthouse": _lighthouse,
    "linkcheck": _linkcheck,
    "versions": _versions,
    "bench": _bench,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)
