"""``autotrans export``, ``import`` and ``clear``: moving cached results in and out."""
from __future__ import annotations

import sys
from pathlib import Path

from ..results.store import POLICIES, ResultCache
from .common import (EXIT_ERROR, UserError, add_cache_dir, add_command, cache_write_failed, note,
                     plural, printable)

STDOUT = "-"


def register(sub) -> None:
    sp = add_command(sub, "export", run_export, "write cached results to a JSON file",
                     "Writes the cached results (every device, or only --device's) to a JSON export\n"
                     "file, or to standard output for FILE '-'. Needs no GPU.",
                     "  autotrans export results.json\n"
                     "  autotrans export - --device 'NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0'"
                     " > h200.json")
    sp.add_argument("file", metavar="FILE", help="JSON file to write ('-': standard output)")
    who = sp.add_mutually_exclusive_group()
    who.add_argument("--all", action="store_true", help="every device's results (the default)")
    who.add_argument("--device", metavar="TEXT", help="only this device fingerprint's results")
    add_cache_dir(sp)

    sp = add_command(sub, "import", run_import, "merge a JSON export file into the cache",
                     "Merges an export file into the cache. --policy faster (default) keeps whichever\n"
                     "result is faster, keep never overwrites an entry, replace always does.",
                     "  autotrans import results.json\n"
                     "  autotrans import results.json --policy replace")
    sp.add_argument("file", metavar="FILE", help="JSON export file to read")
    sp.add_argument("--policy", choices=POLICIES, default="faster",
                    help="on conflicts: keep the faster result (default), keep the cached one, "
                         "or replace it")
    add_cache_dir(sp)

    sp = add_command(sub, "clear", run_clear, "remove cached results",
                     "Removes cached results (all, or only --device's), after asking on a terminal.\n"
                     "Without a terminal, pass --yes.",
                     "  autotrans clear\n"
                     "  autotrans clear --yes\n"
                     "  autotrans clear --device 'NVIDIA A100-SXM4-80GB|sm_80|108sm|driver 550.54.15|"
                     "cuda 12.4' --yes")
    sp.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    sp.add_argument("--device", metavar="TEXT", help="only this device fingerprint's results")
    add_cache_dir(sp)


def run_export(args, seen) -> int:
    cache = ResultCache(args.cache_dir)
    if args.file == STDOUT:
        text, n = cache.export_text(args.device)
        sys.stdout.write(text)
        sys.stdout.flush()
        note(f"exported {plural(n, 'entry', 'entries')} from {cache.path} to standard output")
    else:
        parent = Path(args.file).resolve().parent
        if not parent.is_dir():
            raise UserError(f"{args.file}: the folder {parent} does not exist")
        n = cache.export_json(args.file, device=args.device)
        print(printable(f"exported {plural(n, 'entry', 'entries')} from {cache.path} to {args.file}"))
    if n == 0 and args.device:
        devices = sorted({k.device for k, _ in cache.items()})
        note(f"warning: no entries for device {args.device!r}; devices in the cache: "
             + ("; ".join(devices) if devices else "none"))
    return 0


def run_import(args, seen) -> int:
    if not Path(args.file).is_file():
        raise UserError(f"{args.file}: no such file")
    cache = ResultCache(args.cache_dir)
    counts = cache.import_json(args.file, policy=args.policy)
    if cache_write_failed(seen):
        raise UserError(f"nothing was imported: the cache {cache.path} is not writable")
    skipped = f", {counts['skipped']} skipped (invalid)" if counts.get("skipped") else ""
    print(printable(f"imported {args.file} into {cache.path} (policy {args.policy}): "
                    f"{counts['added']} added, {counts['replaced']} replaced, {counts['kept']} kept"
                    + skipped))
    return 0


def run_clear(args, seen) -> int:
    cache = ResultCache(args.cache_dir)
    n = len(cache.items(device=args.device))
    what = printable(plural(n, "cached result") + (f" of {args.device}" if args.device else ""))
    where = printable(cache.path)
    if n == 0:
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
    gone = cache.clear(device=args.device)
    if cache_write_failed(seen):
        raise UserError(f"the cache {cache.path} could not be cleared")
    print(f"removed {plural(gone, 'cached result')} from {where}")
    return 0
