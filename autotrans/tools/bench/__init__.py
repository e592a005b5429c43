"""The benchmark: autotrans against the copy roofline and its peers, measured
the way GPU kernels are usually measured, with every output checked.

- One process. In every repetition each contender runs once, in an order that
  rotates from one repetition to the next.
- Before every timed launch the L2 is flushed by writing a buffer of
  max(2 x L2, 256 MiB) (Triton's do_bench writes 256 MB). A short spin kernel
  then keeps the stream busy while the host queues the launch, so the CUDA
  events recorded just before and after it time the GPU work alone. Medians
  and IQRs are taken over REPS repetitions.
- The roofline is the faster of cudaMemcpy device-to-device and a 16-byte
  vector copy kernel (cuda_templates/roofline.cu), both moving the same bytes
  in the same run.
- Peers run in the same process on the same data, on the same (legacy default)
  stream: torch eager ``out.copy_(x.mT)``, torch.compile (compiled afresh for
  each shape), CuPy ``ascontiguousarray(x.swapaxes(-1, -2))`` and cuBLAS geam
  (through CuPy; 2-D float32/float64/complex only). JAX/XLA runs on streams of
  its own, so it is timed by wall clock, call to completion, and reported as
  an estimate.
- tuned: the config tune() finds for the shape (it is tuned into the user
  cache if it is not there). untuned: what choose() picks with an empty user
  cache and only the shipped results, as transpose() runs it once the shape's
  fixed build is in the kernel store (api.specialise, on unless
  AUTOTRANS_SPECIALISE=0).
- Every output, ours and the peers', is compared byte for byte on the GPU with
  the transposed input. Each is checked twice, on the complement of the input
  first, so a stale right answer left in a reused buffer cannot pass. Float
  inputs are finite and normal, so arithmetic peers such as geam reproduce
  them exactly.

A peer that is missing, or that fails or gives a wrong answer on a case, is
recorded as such and the run goes on. Results are plain JSON rows (see
Row.to_dict); evaluate(), report() and readme_table() work on those rows alone,
without a GPU.

Modules: cases (the zoo, held-out shapes), grid (the shipped grid), problems
(the shipped strided problems), results
(Result, Row), gpu (roofline.cu's kernels, buffers), measure (timing, the
roofline's copies), check (bit-exact checks), ours and peers (the contenders),
run (Bench, run), suite (the result file's run, tune() times), document (the
file format, load_results), targets, report, readme.
"""
from .cases import BANDS, CLASSES, MIB, Case, band, held_out, parse_cases, quick, zoo
from .document import METHOD, load_results
from .gpu import device_or_error
from .grid import GRID_SQUARES, grid
from .measure import REPS
from .problems import PermuteCase, problem_grid
from .readme import README_CASES, readme_table
from .report import LIMITS, markdown, report
from .results import CONTENDERS, LABELS, Result, Row, datasheet_gbps, one_line
from .run import Bench, progress_line, run
from .suite import new_doc, run_suite, tune_time, write
from .targets import TARGETS, Check, Tally, evaluate, flags, summary, tune_checks

__all__ = ["device_or_error", "BANDS", "CLASSES", "CONTENDERS", "GRID_SQUARES", "LABELS", "LIMITS", "METHOD", "MIB", "README_CASES",
           "PermuteCase", "REPS", "TARGETS", "Bench", "Case", "Check", "Result", "Row", "Tally", "band",
           "datasheet_gbps", "evaluate",
           "flags", "grid", "held_out", "load_results", "markdown", "new_doc", "one_line", "parse_cases",
           "problem_grid", "progress_line", "quick", "readme_table", "report", "run", "run_suite", "summary",
           "tune_checks", "tune_time", "write", "zoo"]
