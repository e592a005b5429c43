"""``autotrans export``, ``import`` and ``clear``: moving cached results in and out
(transpose entries and strided problems' rows alike; the messages count the
strided-problem rows apart where there are any)."""
from __future__ import annotations

import sys
from pathlib import Path

from ..results.store import POLICIES, CacheReadError, ResultCache
from .common import (EXIT_ERROR, UserError, add_cache_dir, add_command, cache_write_failed, note,
                     output_file, plural, printable)

STDIO = "-"


def register(sub) -> None:
    sp = add_command(sub, "export", run_export, "write cached results to a JSON file",
                     "Writes the cached results (every device, or only --device's), strided problems'\n"
                     "included, to a JSON export file, or to standard output for FILE '-'. Needs no GPU.",
                     "  autotrans export results.json\n"
                     "  autotrans export - --device 'NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0'"
                     " > h200.json")
    sp.add_argument("file", metavar="FILE", help="JSON file to write ('-': standard output)")
    who = sp.add_mutually_exclusive_group()
    who.add_argument("--all", action="store_true", help="every device's results (the default)")
    who.add_argument("--device", metavar="TEXT", help="only this device fingerprint's results")
    add_cache_dir(sp)

    sp = add_command(sub, "import", run_import, "merge a JSON export file into the cache",
                     "Merges export files into the cache, one after another, each all or nothing.\n"
                     "--policy faster (default) keeps whichever result is faster, keep never\n"
                     "overwrites an entry, replace always does.",
                     "  autotrans import results.json\n"
                     "  autotrans import results-*.json --policy replace\n"
                     "  autotrans export - | autotrans import - --cache-dir other")
    sp.add_argument("files", nargs="+", metavar="FILE", help="JSON export files to read ('-': standard input)")
    sp.add_argument("--policy", choices=POLICIES, default="faster",
                    help="on conflicts: keep the faster result (default), keep the cached one, "
                         "or replace it")
    add_cache_dir(sp)

    sp = add_command(sub, "clear", run_clear, "remove cached results",
                     "Removes cached results (all, or only --device's), strided problems' included,\n"
                     "after asking on a terminal.\n"
                     "Without a terminal, pass --yes.",
                     "  autotrans clear\n"
                     "  autotrans clear --yes\n"
                     "  autotrans clear --device 'NVIDIA A100-SXM4-80GB|sm_80|108sm|driver 550.54.15|"
                     "cuda 12.4' --yes")
    sp.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    sp.add_argument("--device", metavar="TEXT", help="only this device fingerprint's results")
    add_cache_dir(sp)


def _and_problems(p: int, word: str, many: str) -> str:
    """`` and P strided-problem WORDs``, or nothing for none."""
    return f" and {plural(p, 'strided-problem ' + word, 'strided-problem ' + many)}" if p else ""


def run_export(args, seen) -> int:
    try:
        return _export(args, ResultCache(args.cache_dir))
    except CacheReadError as exc:
        where = "standard output" if args.file == STDIO else args.file
        raise UserError(f"{exc}; nothing was written to {where}") from None


def _export(args, cache: ResultCache) -> int:
    if args.file == STDIO:
        text, n, p = cache.export_rows(args.device)
        sys.stdout.write(text)
        sys.stdout.flush()
        note(f"exported {_entries(n, p)} from {cache.path} to standard output")
    else:
        output_file(args.file, args.cache_dir, "export to")
        n, p = cache.export_file(args.file, device=args.device)
        print(printable(f"exported {_entries(n, p)} from {cache.path} to {args.file}"))
    if n == 0 and p == 0 and args.device:
        devices = sorted({k.device for k, _ in cache.items()} | {k.device for k, _ in cache.problem_items()})
        note(f"warning: no entries for device {args.device!r}; devices in the cache: "
             + ("; ".join(devices) if devices else "none"))
    return 0


def _entries(n: int, p: int) -> str:
    return plural(n, "entry", "entries") + _and_problems(p, "entry", "entries")


def _results(n: int, p: int) -> str:
    return plural(n, "cached result") + _and_problems(p, "result", "results")


def _counts(counts: dict) -> str:
    skipped = f", {counts['skipped']} skipped (invalid)" if counts.get("skipped") else ""
    return f"{counts['added']} added, {counts['replaced']} replaced, {counts['kept']} kept" + skipped


def run_import(args, seen) -> int:
    """Import each file in turn; every file is checked readable before the
    first is read, and an error names the files already imported."""
    if args.files.count(STDIO) > 1:
        raise UserError("standard input ('-') can be imported once")
    for name in args.files:
        if name != STDIO:
            _readable(name)
    cache, done = ResultCache(args.cache_dir), []
    for name in args.files:
        try:
            _import_one(cache, name, args.policy, seen)
        except (UserError, ValueError, OSError) as exc:
            if not done:
                raise
            raise UserError(f"{exc} (already imported: {', '.join(done)})") from None
        done.append("standard input" if name == STDIO else name)
    return 0


def _import_one(cache: ResultCache, name: str, policy: str, seen) -> None:
    if name == STDIO:
        counts = cache.import_text(sys.stdin.buffer.read(), policy=policy)
    else:
        counts = cache.import_json(name, policy=policy)
    if cache_write_failed(seen):
        raise UserError(f"nothing was imported: the cache {cache.path} is not writable")
    share = counts.get("problems")
    entries = {k: n - share[k] for k, n in counts.items() if k != "problems"} if share else counts
    source = "standard input" if name == STDIO else name
    print(printable(f"imported {source} into {cache.path} (policy {policy}): {_counts(entries)}"
                    + (f"; strided problems: {_counts(share)}" if share else "")))


def _readable(name: str) -> None:
    """UserError unless ``name`` is a regular file (what an export is)."""
    path = Path(name)
    if path.is_file():
        return
    if path.is_dir():
        raise UserError(f"{name}: is a folder, not an export file")
    raise UserError(f"{name}: " + ("not a regular file" if path.exists() else "no such file"))


def run_clear(args, seen) -> int:
    cache = ResultCache(args.cache_dir)
    if args.device:
        n, p = len(cache.items(device=args.device)), len(cache.problem_items(device=args.device))
    else:
        n, p = cache.row_counts()     # invalid rows too: clear removes them
    what = printable(_results(n, p) + (f" of {args.device}" if args.device else ""))
    where = printable(cache.path)
    if n == 0 and p == 0:
        print(f"nothing to clear in {where}")
        return 0
    if not args.yes:
        if not sys.stdin or not sys.stdin.isatty():
            raise UserError(f"refusing to remove {what} without confirmation (stdin is not a "
                            "terminal); pass --yes")
        try:
            answer = input(f"Remove {what} from {where}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing removed")
            return EXIT_ERROR
    before = len(seen)
    gone, gone_problems = cache.clear_each(device=args.device)
    if cache_write_failed(seen[before:]):
        raise UserError(f"the cache {cache.path} could not be cleared")
    print(f"removed {_results(gone, gone_problems)} from {where}")
    return 0
