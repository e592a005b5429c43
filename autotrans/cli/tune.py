"""``autotrans tune``: tune shapes (given, or captured in a file) and cache the
winners; with ``--axes``, the permutation of one N-d array (its canonical
problem: a copy, a dense transpose or a strided problem)."""
from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core import layout
from ..core.problem import as_bmn, format_shape
from .common import (EXIT_ERROR, UserError, add_cache_dir, add_command, add_dtype, add_progress,
                     cache_write_failed, err, need_gpu, note, printable)
from .permutation import axes_arg, describe, shape_arg

HELP = "tune shapes on this GPU and cache the fastest kernels"
DESCRIPTION = (
    "Tunes each shape (MxN, or BxMxN for a batch of B matrices): compiles the search space,\n"
    "verifies every candidate bit-exactly, times them against memcpy and caches the winner.\n"
    "--from FILE tunes every (shape, dtype) and permute() problem a program met without a\n"
    "tuned result, as captured by running it with AUTOTRANS_CAPTURE=FILE.\n"
    "With --axes, SHAPE is one C-contiguous array of 1 to 8 dimensions: the permutation\n"
    "numpy.transpose(x, AXES) is reduced to its canonical problem (printed) and that is tuned:\n"
    "a dense transpose as above, a strided problem (tile or rows) over the strided kernels;\n"
    "a copy needs no tuning. --to DTYPE tunes the permutation cast to DTYPE in the same pass\n"
    "(permute(x, AXES, dtype=DTYPE)); --conj, of a complex dtype, tunes it conjugated in the\n"
    "same pass (permute(x, AXES, conj=True)).")
EXAMPLES = ("  autotrans tune 8192x8192\n"
            "  autotrans tune 8192x8192 4097x4095 --dtype float16\n"
            "  autotrans tune 64x512x512 --dtype float64 --no-progress\n"
            "  AUTOTRANS_CAPTURE=shapes.jsonl python train.py; autotrans tune --from shapes.jsonl\n"
            "  autotrans tune 8192x8192 4096x4096 8192x1024 --devices all   # one worker per GPU\n"
            "  autotrans tune 64x512x16x64 --axes 0,2,1,3 --dtype float16  # (B, S, H, D) -> (B, H, S, D)\n"
            "  autotrans tune 8192x8192 --axes 1,0 --to bfloat16            # float32 -> bfloat16 cast-transpose\n"
            "  autotrans tune 4096x4096 --axes 1,0 --dtype complex64 --conj # Hermitian transpose")


@dataclass(frozen=True)
class Job:
    """One (shape, dtype) to tune."""
    shape: tuple
    dtype: np.dtype

    @property
    def name(self) -> str:
        return f"{format_shape(self.shape)} {self.dtype.name}"


def register(sub) -> None:
    sp = add_command(sub, "tune", run, HELP, DESCRIPTION, EXAMPLES)
    sp.add_argument("shapes", nargs="*", type=shape_arg, metavar="SHAPE",
                    help="MxN or BxMxN (with --axes: one shape of 1 to 8 dimensions)")
    sp.add_argument("--axes", type=axes_arg, metavar="0,2,1,...",
                    help="tune the permutation numpy.transpose(x, AXES) of one C-contiguous array of SHAPE")
    sp.add_argument("--to", metavar="DTYPE",
                    help="with --axes: the result's dtype (a cast in the same pass, e.g. bfloat16, float16)")
    sp.add_argument("--conj", action="store_true",
                    help="with --axes: the conjugate in the same pass (permute(..., conj=True)); "
                         "a real dtype's is itself (nothing to add)")
    sp.add_argument("--from", dest="capture", metavar="FILE",
                    help="also tune every (shape, dtype) and strided problem of this capture file "
                         "(AUTOTRANS_CAPTURE)")
    sp.add_argument("--devices", metavar="all|0,1,...",
                    help="spread the shapes over these GPUs, one worker process each (results go into "
                         "the one cache)")
    add_dtype(sp)
    add_cache_dir(sp)
    add_progress(sp)

    def check(args):
        if args.to is not None and args.axes is None:
            sp.error("--to needs --axes (a cast of a permutation)")
        if args.conj and (args.axes is None or args.to is not None):
            sp.error("--conj needs --axes, and takes no --to (a conjugate of a complex permutation)")
        if args.axes is not None:
            if len(args.shapes) != 1 or args.capture is not None or args.devices is not None:
                sp.error("--axes takes exactly one SHAPE, and no --from or --devices")
            try:
                _permutation(args)
            except ValueError as exc:
                sp.error(f"--axes {','.join(map(str, args.axes))} of {'x'.join(map(str, args.shapes[0]))}"
                         f"{'' if args.to is None else ' --to ' + args.to}{' --conj' if args.conj else ''}: {exc}")
            return
        for shape in args.shapes:
            if shape.problem:
                sp.error(f"argument SHAPE: {shape.problem}")
        if not args.shapes and args.capture is None:
            sp.error("give the shapes to tune, or --from FILE (or both)")

    sp.set_defaults(check=check)


def summary_line(result) -> str:
    """One line per tuned shape: the winner and how it compares to memcpy."""
    memcpy_gbps = getattr(result, "memcpy_gbps", None)
    mem = f"memcpy {result.memcpy_us:.1f} µs"
    if isinstance(memcpy_gbps, (int, float)):
        mem += f" / {memcpy_gbps:.0f} GB/s"
    return printable(f"{format_shape(result.shape)} {result.dtype}: {result.best.key}  "
                     f"{result.time_us:.1f} µs  {result.gbps:.0f} GB/s = {result.frac_memcpy:.0%} "
                     f"of memcpy ({mem}; {len(result.candidates)} timed, {len(result.failures)} failed)")


def jobs(shapes, dtype, captured=()) -> list[Job]:
    """The shapes given (in ``dtype``), then the captured (shape, dtype) pairs, each once."""
    out = {}
    for shape, dt in [(s, dtype) for s in shapes] + list(captured):
        out.setdefault((as_bmn(shape), dt.name), Job(shape, dt))
    return list(out.values())


def _captured(path: str, alone: bool) -> tuple[list, list]:
    """The (shape, dtype) pairs and the strided problems (problem, cast,
    epilogue) of a capture file; UserError if it is no capture file, or
    (``alone``: nothing else to tune) lists nothing."""
    from ..api import capture
    p = Path(path)
    if not p.exists():
        raise UserError(f"{path}: no such capture file")
    if not p.is_file():
        raise UserError(f"{path}: not a capture file (not a regular file)")
    shapes, problems = capture.read_all(p)
    if not shapes and not problems:
        hint = f"{path} lists no shapes (run your program with AUTOTRANS_CAPTURE={path} to fill it)"
        if alone:
            raise UserError(f"nothing to tune: {hint}")
        note(hint)
    return shapes, problems


def run(args, seen) -> int:
    if args.axes is not None:
        return _tune_permutation(args, seen)
    captured, problems = _captured(args.capture, not args.shapes) if args.capture is not None else ([], [])
    todo = jobs(args.shapes, args.dtype, captured)
    show = not args.no_progress and sys.stderr.isatty()
    if args.devices is not None:
        code = _tune_spread(todo, args) if todo else 0
        if not problems:
            return code
        todo, failed = [], int(code != 0)     # captured strided problems: tuned here, on the current GPU
    else:
        failed = 0
    need_gpu("tune")
    if args.capture is None:
        failed += sum(not _tune(job, args, False if args.no_progress else None) for job in todo)
    else:
        failed += _tune_all(todo, args, show, problems)
    if cache_write_failed(seen):
        err("results could not be saved to the cache (see the warning above)")
        return EXIT_ERROR
    return EXIT_ERROR if failed else 0


def _permutation(args) -> tuple:
    """(the problem permute() runs for --axes, --to and --conj, its cast, its
    epilogue): api.permute.permutation_problem; ValueError for a bad one."""
    from ..api.permute import permutation_problem
    return permutation_problem(tuple(args.shapes[0]), args.dtype, args.axes, conj=bool(args.conj), to=args.to)


def _tune_permutation(args, seen) -> int:
    """Print the canonical problem of the permutation, then tune it (a copy needs nothing)."""
    shape, dt = tuple(args.shapes[0]), args.dtype
    problem, cast, epilogue = _permutation(args)
    name = (f"{'x'.join(map(str, shape))} {dt.name} axes {','.join(map(str, args.axes))}"
            + ("" if cast == "none" else f" to {args.to} (cast {cast})")
            + ("" if epilogue == "none" else f" conj ({epilogue})"))
    print(printable(f"{name}: {describe(problem)}"), flush=True)
    if args.conj and epilogue == "none":
        note(f"--conj changes nothing for {dt.name}: a real array's conjugate is itself (as permute(conj=True))")
    if isinstance(problem, layout.CopyProblem):
        print("a copy: nothing to tune (permute() runs it as a device-to-device copy)")
        return 0
    need_gpu("tune")
    ok = _tune_axes(args, problem)
    if cache_write_failed(seen):
        err("results could not be saved to the cache (see the warning above)")
        return EXIT_ERROR
    return 0 if ok else EXIT_ERROR


def _tune_axes(args, problem) -> bool:
    """api.tune of the permutation (its canonical ``problem``, not a copy);
    print its summary line, or its error; True if it worked."""
    from .. import api
    from ..backend.cuda import GPUUnavailable
    try:
        res = api.tune(tuple(args.shapes[0]), args.dtype, axes=args.axes, conj=bool(args.conj), to=args.to,
                       cache_dir=args.cache_dir, progress=False if args.no_progress else None)
    except GPUUnavailable:
        raise
    except (ValueError, RuntimeError) as exc:
        err(f"{describe(problem)}: {exc}")
        return False
    transpose = isinstance(problem, layout.TransposeProblem)
    print(summary_line(res) if transpose else problem_summary(problem, res), flush=True)
    return True


def problem_summary(problem, result) -> str:
    """One line for a tuned strided problem: the winner and how it compares to memcpy."""
    from ..results.keys import problem_text
    return printable(f"{problem_text(problem)}: {result.best.key}  {result.time_us:.1f} µs  "
                     f"{result.gbps:.0f} GB/s = {result.frac_memcpy:.0%} of memcpy (memcpy "
                     f"{result.memcpy_us:.1f} µs / {result.memcpy_gbps:.0f} GB/s; {len(result.candidates)} "
                     f"timed, {len(result.failures)} failed)")


def _tune_strided(problem, args, progress, cast: str = "none", epilogue: str = "none") -> bool:
    from ..backend.cuda import GPUUnavailable
    from ..results.store import ResultCache
    from ..tuning.strided import tune_problem
    try:
        res = tune_problem(problem, cache=ResultCache(args.cache_dir), progress=progress, cast=cast,
                           epilogue=epilogue)
    except GPUUnavailable:
        raise
    except (ValueError, RuntimeError) as exc:
        err(f"{describe(problem)}: {exc}")
        return False
    print(problem_summary(problem, res), flush=True)
    return True


def _tune_all(todo: list[Job], args, show: bool, problems=()) -> int:
    """Tune every job, then every captured strided problem (problem, cast,
    epilogue), under one progress bar; returns how many failed."""
    failed = 0
    with _bar(show, len(todo) + len(problems)) as step:
        for job in todo:
            with step(job.name):
                failed += not _tune(job, args, False)
        for problem, cast, epilogue in problems:
            with step(describe(problem)[:60]):
                failed += not _tune_strided(problem, args, False, cast, epilogue)
    return failed


def _tune_spread(todo: list[Job], args) -> int:
    """Tune over several GPUs (tuning.parallel), one progress bar over all jobs."""
    from ..backend import driver
    from ..tuning import parallel
    try:
        devices = parallel.parse_devices(args.devices, driver.device_count())
    except driver.GPUUnavailable as exc:
        raise UserError(f"no GPU: tune needs an NVIDIA GPU ({exc})") from None
    except ValueError as exc:
        raise UserError(str(exc)) from None
    show = not args.no_progress and sys.stderr.isatty()
    failed = 0
    with _bar(show, len(todo)) as step:
        def done(line):
            nonlocal failed
            with step(f"{format_shape(line['shape'])} {line['dtype']}"):
                if line.get("ok"):
                    print(printable(line["summary"]), flush=True)
                else:
                    failed += 1
                    err(f"{format_shape(line['shape'])} {line['dtype']}: {line.get('error')}")
        parallel.run([(j.shape, j.dtype) for j in todo], devices, cache_dir=args.cache_dir, on_done=done)
    return EXIT_ERROR if failed else 0


def _tune(job: Job, args, progress) -> bool:
    """Tune one job and print its summary line, or its error; True if it worked."""
    from .. import api
    from ..backend.cuda import GPUUnavailable
    try:
        res = api.tune(job.shape, job.dtype, cache_dir=args.cache_dir, progress=progress)
    except GPUUnavailable:
        raise
    except (ValueError, RuntimeError) as exc:
        err(f"{job.name}: {exc}")
        return False
    print(summary_line(res), flush=True)
    return True


@contextlib.contextmanager
def _bar(show: bool, total: int):
    """One rich progress bar (on stderr) over ``total`` steps; yields
    step(description), a context manager for one step."""
    if not show:
        yield lambda desc: contextlib.nullcontext()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    # Lines printed meanwhile go above the bar; stdout is only taken over when it
    # is the terminal too, so that redirected summaries stay on stdout.
    with Progress(TextColumn("{task.description:<28}", markup=False), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True),
                  redirect_stdout=sys.stdout.isatty()) as progress:
        task = progress.add_task("tuning", total=total)

        @contextlib.contextmanager
        def step(desc: str):
            progress.update(task, description=f"tuning {printable(desc)}")
            try:
                yield
            finally:
                progress.advance(task)

        yield step
