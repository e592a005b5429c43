"""The command line, run for real: ``python -m autotrans ...`` in a subprocess
with its own cache folder (AUTOTRANS_CACHE_DIR), on real sqlitedict caches."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autotrans.api.listing import find_record
from autotrans.cli import main
from autotrans.cli.common import MAX_MESSAGE, one_line, printable
from autotrans.cli.report import bars_from_row
from autotrans.cli.show import table_rows
from autotrans.core.problem import format_shape, parse_dtype, parse_shape
from autotrans.results.store import CacheKey, ResultCache
from autotrans.kernels.config import classic
from autotrans.tuning.space import space_id

REPO = Path(__file__).resolve().parent.parent
H200 = "NVIDIA H200|sm_90|132sm|driver 580.95.05|cuda 13.0"
A100 = "NVIDIA A100-SXM4-80GB|sm_80|108sm|driver 550.54.15|cuda 12.4"
STALE = "0123456789abcdef-s0"
COMMANDS = ["tune", "show", "bench", "export", "import", "clear", "report", "explain", "banks", "sectors"]


def _gpu_reason():
    from autotrans.backend.cuda import GPUUnavailable, device
    try:
        device()
        return None
    except GPUUnavailable as exc:
        return str(exc)


@pytest.fixture(scope="session")
def no_gpu():
    """For tests of the no-GPU paths: skipped where a GPU is usable."""
    if _gpu_reason() is None:
        pytest.skip("a GPU is available here; this test covers the no-GPU behaviour")


@pytest.fixture
def cache_dir(tmp_path):
    d = tmp_path / "cache"
    d.mkdir()
    return d


@pytest.fixture
def run(cache_dir, tmp_path):
    """run(*args, input=None, cwd=None, **ENV) -> CompletedProcess of ``python -m
    autotrans args`` (ENV: extra environment variables)."""
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOTRANS_DEBUG", "COLUMNS")}
    env["AUTOTRANS_CACHE_DIR"] = str(cache_dir)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")

    def go(*args, input=None, cwd=None, timeout=300, **more_env):
        stdin = {} if input is not None else {"stdin": subprocess.DEVNULL}
        return subprocess.run([sys.executable, "-m", "autotrans", *map(str, args)], cwd=cwd or tmp_path,
                              env={**env, **more_env}, input=input, capture_output=True, text=True,
                              timeout=timeout, **stdin)
    return go


def assert_user_error(r, *needles):
    """Non-zero exit, exactly one stderr line starting 'autotrans: error:', no traceback."""
    assert r.returncode != 0, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("autotrans: error: "), r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.fixture
def populated(cache_dir, record_factory):
    """A cache holding three real entries: H200 and A100 with the current
    templates, and a stale H200 one; returns {name: (CacheKey, record)}."""
    sid = space_id()
    entries = {
        "h200": (CacheKey(H200, sid, (8192, 8192), 4), record_factory((8192, 8192), 4, H200, seed=1)),
        "a100": (CacheKey(A100, sid, (4096, 4096), 2),
                 record_factory((4096, 4096), 2, A100, dtype="float16", seed=2, date="2025-10-01T12:00:00+00:00")),
        "stale": (CacheKey(H200, STALE, (16, 1024, 2048), 8), record_factory((16, 1024, 2048), 8, H200, seed=3)),
    }
    rc = ResultCache(cache_dir)
    for key, rec in entries.values():
        assert rc.put(key, rec)
    assert len(rc.items()) == 3
    return entries


# -- pure helpers ------------------------------------------------------------------


@pytest.mark.parametrize("text, shape", [
    ("8192x8192", (8192, 8192)), ("4x512x512", (4, 512, 512)), ("4097X4095", (4097, 4095)),
    (" 3 x 5 ", (3, 5)), ("1x1", (1, 1)),
])
def test_parse_shape(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize("text", ["", "8192", "8192x", "x8192", "1x2x3x4", "0x5", "5x0", "-3x4",
                                  "3.5x4", "axb", "8192x8192x"])
def test_parse_shape_rejects(text):
    with pytest.raises(ValueError, match="bad shape"):
        parse_shape(text)


def test_format_shape():
    assert format_shape((1, 64, 128)) == "64x128"
    assert format_shape((64, 128)) == "64x128"
    assert format_shape((4, 64, 128)) == "4x64x128"


def test_parse_dtype():
    assert parse_dtype("float16") == np.float16
    assert parse_dtype("complex128").itemsize == 16
    assert parse_dtype("uint8") == np.uint8
    for bad in ("float33", "U10", "object", "V3", "complex256"):
        with pytest.raises(TypeError):
            parse_dtype(bad)


def test_one_line():
    assert one_line("a\n  b\tc\n") == "a b c"
    assert len(one_line("x" * 5000)) == MAX_MESSAGE


@pytest.mark.parametrize("text, needle", [
    ("\u0663x4", "ASCII digits"), ("\uff18x8", "ASCII digits"), ("8x\u0968", "ASCII digits"),
    (f"{2 ** 62 + 1}x4", "at most 2**62"), ("4x" + "1" * 30, "at most 2**62"),
    ("9" * 5000 + "x4", "at most 2**62"), ("-3x4", "positive"), ("3x-4", "positive"),
])
def test_parse_shape_says_why(text, needle):
    with pytest.raises(ValueError, match="bad shape") as info:
        parse_shape(text)
    assert needle in str(info.value)


def test_parse_shape_limits():
    assert parse_shape(f"{2 ** 62}x1") == (2 ** 62, 1)
    assert parse_shape("0" * 40 + "7x5") == (7, 5)      # leading zeros are not digits of size
    with pytest.raises(ValueError, match="bad shape"):
        parse_shape(None)


@pytest.mark.parametrize("text, needle", [
    ("(2,2)f4", "sub-array"), ("(1,)f4", "sub-array"), ("i4,i4", "structured"), ("f4,", "structured"),
    ("V8", "raw bytes"), ("O", "Python objects"),
])
def test_parse_dtype_rejects_compound_types(text, needle):
    with pytest.raises(TypeError, match=re.escape(needle)):
        parse_dtype(text)
    with pytest.raises(TypeError, match="structured"):
        parse_dtype(np.dtype([("a", "<f4")]))


def test_printable_neutralises_terminal_controls():
    evil = "GPU\x1b[2J\x1b]0;owned\x07\r\u202eevil\u2028x\x9b31m"
    out = printable(evil)
    assert out.isprintable()
    assert out == "GPU\\x1b[2J\\x1b]0;owned\\x07\\x0d\\u202eevil\\u2028x\\x9b31m"
    assert printable("µs 8192x8192 NVIDIA H200 日本 é") == "µs 8192x8192 NVIDIA H200 日本 é"
    assert printable(Path("/tmp/a")) == "/tmp/a"
    line = one_line("bad\x1b[31m\nkey")
    assert "\x1b" not in line and line == "bad\\x1b[31m key"


def test_table_rows_are_printable():
    rows = [{"device": "GPU\x1b[31m|sm_90|1sm|driver 1|cuda 1", "shape": (1, 8, 8), "elem_bytes": 4,
             "dtype": "float32\x07", "config": "k\x1b]0;x\x07", "time_us": 1.0, "gbps": 1.0,
             "frac_memcpy": 0.5, "date": "2025\x1b[2J-01-01", "current": True}]
    _, cells = table_rows(rows, show_device=True)
    assert all(c.isprintable() for c in cells[0]), cells
    assert cells[0][1] == "float32\\x07" and cells[0][-1].startswith("GPU\\x1b[31m")


def test_table_rows_marks_stale_and_sorts():
    rows = [
        {"device": H200, "shape": (1, 8192, 8192), "elem_bytes": 4, "dtype": "float32",
         "config": "k1", "time_us": 61.04, "gbps": 4398.2, "frac_memcpy": 0.934,
         "date": "2025-11-30T09:41:07+00:00", "current": True},
        {"device": H200, "shape": (16, 1024, 2048), "elem_bytes": 8, "dtype": "float64",
         "config": "k2", "time_us": None, "gbps": None, "frac_memcpy": None, "date": None,
         "current": False},
        {"device": H200, "shape": (1, 64, 64), "elem_bytes": 4, "dtype": "float32",
         "config": "k3", "time_us": 2.0, "gbps": 16.4, "frac_memcpy": 0.5, "date": "bad date",
         "current": True},
    ]
    headers, cells = table_rows(rows)
    assert headers == ["shape", "dtype", "config", "µs", "GB/s", "of memcpy", "date"]
    assert cells[0] == ["64x64", "float32", "k3", "2.0", "16", "50%", "bad date"]
    assert cells[1] == ["8192x8192", "float32", "k1", "61.0", "4398", "93%", "2025-11-30 09:41"]
    assert cells[2] == ["16x1024x2048", "float64", "k2 *", "-", "-", "-", ""]
    headers, cells = table_rows(rows, show_device=True)
    assert headers[-1] == "device" and all(c[-1] == H200 for c in cells)


def test_bars_from_row():
    """A bar for every contender the benchmark times (its row's "<name>_us";
    the tuned one drawn as autotrans), none for a timing that is missing."""
    from autotrans.tools.bench.results import CONTENDERS
    from autotrans.tools.report import BAR_ORDER
    assert set(BAR_ORDER) == {"autotrans"} | set(CONTENDERS) - {"tuned"}
    nbytes = 8192 * 8192 * 4
    row = {"autotrans_us": 100.0, "tuned_us": 100.0, "memcpy_us": 50.0, "copy16_us": 55.0, "torch_us": None,
           "torch_compile_us": 120.0, "cupy_us": 0, "geam_us": 150.0, "jax_us": None, "seed_us": 200.0}
    bars = bars_from_row(row, nbytes)
    assert set(bars) == {"autotrans", "memcpy", "copy16", "torch_compile", "geam"}
    assert bars["autotrans"] == pytest.approx(2 * nbytes / 100e-6 / 1e9)
    assert bars["memcpy"] == pytest.approx(2 * bars["autotrans"])


def test_find_record_prefers_current_then_newest(cache_dir, record_factory):
    sid = space_id()
    rc = ResultCache(cache_dir)
    old = record_factory((512, 256), 4, A100, seed=4, date="2025-01-01T00:00:00+00:00")
    new = record_factory((512, 256), 4, H200, seed=5, date="2025-06-01T00:00:00+00:00")
    stale = record_factory((512, 256), 4, H200, seed=6, date="2025-12-01T00:00:00+00:00")
    rc.put(CacheKey(A100, sid, (512, 256), 4), old)
    rc.put(CacheKey(H200, sid, (512, 256), 4), new)
    rc.put(CacheKey(H200, STALE, (512, 256), 4), stale)
    key, rec = find_record((512, 256), 4, cache_dir)
    assert key.device == H200 and key.templates == sid and rec["date"] == new["date"]
    key, rec = find_record((512, 256), 4, cache_dir, device=A100)
    assert rec["date"] == old["date"]
    assert find_record((512, 256), 2, cache_dir) is None
    assert find_record((256, 512), 4, cache_dir) is None


def test_main_in_process_returns_codes(capsys):
    assert main(["--version"]) == 0
    assert "autotrans" in capsys.readouterr().out
    assert main(["tune", "12"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autotrans: error: ") and err.count("\n") == 1
    assert main(["tune"]) == 2            # neither shapes nor --from
    err = capsys.readouterr().err
    assert err.startswith("autotrans: error: ") and "--from FILE" in err and err.count("\n") == 1
    assert main(["explain", "-3x4"]) == 2
    assert "bad shape '-3x4'" in capsys.readouterr().err


# -- help ------------------------------------------------------------------------------


def test_top_level_help_lists_every_command(run):
    r = run("--help")
    assert r.returncode == 0, r.stderr
    for c in COMMANDS:
        assert f"\n    {c} " in r.stdout, c


@pytest.mark.parametrize("command", COMMANDS)
def test_help_for_every_command(run, command):
    r = run(command, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: autotrans {command}")
    assert "examples:" in r.stdout and f"autotrans {command} " in r.stdout.split("examples:")[1]
    assert r.stderr == ""


def test_show_help_says_what_of_memcpy_is(run):
    text = " ".join(run("show", "--help").stdout.split())
    assert "'of memcpy' is a cudaMemcpy's time for the same bytes" in text and "above 1.00" in text


def test_no_command_prints_help_and_fails(run):
    r = run()
    assert r.returncode == 2 and "usage: autotrans" in r.stderr and "Traceback" not in r.stderr


def test_help_examples_are_valid_config_keys(run):
    from autotrans.kernels.config import KernelConfig
    r = run("banks", "--help")
    keys = [line.split()[-1] for line in r.stdout.split("examples:")[1].splitlines() if "banks" in line]
    assert len(keys) == 2
    for k in keys:
        KernelConfig.from_key(k)


# -- user errors: one line, no traceback ------------------------------------------------


@pytest.mark.parametrize("args, needle", [
    (["tune", "81x"], "bad shape '81x'"),
    (["tune", "8192x8192", "0x5"], "bad shape '0x5'"),
    (["report", "1x2x3x4"], "bad shape"),
    (["tune", "64x64", "--dtype", "float33"], "unknown dtype 'float33'"),
    (["explain", "64x64", "--dtype", "U10"], "itemsize 40"),
    (["bench", "64x64", "--dtype", "object"], "dtype"),
    (["frobnicate"], "invalid choice"),
    (["import", "x.json", "--policy", "fastest"], "invalid choice"),
    (["show", "--bogus"], "unrecognized arguments"),
    (["banks", "tile:e4:not-a-key"], "not a KernelConfig key"),
    (["banks", classic("tile", 4).key.replace("t1024", "t1000")], "threads"),
    (["banks", "rows:e4:1024x4:t256:v16:r1:p0:none:row:strided"], "cannot run a tile problem"),
    (["import", "missing.json"], "missing.json"),
    (["export", "no/such/folder/x.json"], "does not exist"),
    # shapes that start with a minus are bad shapes, not unknown options
    (["explain", "-3x4"], "bad shape '-3x4': dimensions must be positive"),
    (["tune", "8x8", "-3x4", "--no-progress"], "bad shape '-3x4'"),
    (["bench", "-1x5"], "bad shape '-1x5'"),
    (["report", "8x-8"], "bad shape '8x-8'"),
    (["explain", "\u0663x4"], "ASCII digits"),              # ARABIC-INDIC DIGIT THREE
    (["tune", "\uff18x8"], "ASCII digits"),                 # FULLWIDTH DIGIT EIGHT
    (["explain", f"{2 ** 62 + 1}x4"], "at most 2**62"),
    (["explain", "9" * 5000 + "x4"], "at most 2**62"),
    (["explain", "64x64", "--dtype", "(2,2)f4"], "sub-array"),
    (["explain", "64x64", "--dtype", "i4,i4"], "structured"),
    (["tune", "64x64", "--dtype", "V8"], "raw bytes"),
    (["tune", "64x64", "--dtype", "O"], "Python objects"),
    (["tune"], "--from FILE"),
    (["tune", "--no-progress"], "--from FILE"),
])
def test_user_errors_are_one_line(run, args, needle):
    assert_user_error(run(*args), needle)


def test_import_rejects_a_file_that_is_not_an_export(run, tmp_path):
    (tmp_path / "junk.json").write_text('{"hello": 1}')
    assert_user_error(run("import", "junk.json"), "not an autotrans cache export")
    (tmp_path / "bad.json").write_text("{nope")
    assert_user_error(run("import", "bad.json"), "not JSON")


def test_tune_without_gpu(run, no_gpu, cache_dir):
    r = run("tune", "256x256", "--no-progress")
    assert_user_error(r, "no GPU")
    assert not (cache_dir / "results.sqlite").exists()


def test_tune_devices_without_gpu_or_with_a_bad_list(run, no_gpu, cache_dir):
    assert_user_error(run("tune", "256x256", "--devices", "all", "--no-progress"), "no GPU")
    assert not (cache_dir / "results.sqlite").exists()


def test_bench_without_gpu(run, no_gpu):
    assert_user_error(run("bench", "256x256"))


def test_explain_without_gpu_needs_a_fingerprint(run, no_gpu):
    assert_user_error(run("explain", "8192x8192"), "no GPU", "--fingerprint")


def test_report_uncached_without_gpu(run, no_gpu, populated, tmp_path):
    assert_user_error(run("report", "1000x1000", "-o", "r.png"), "not cached", "no GPU")
    assert not (tmp_path / "r.png").exists()


# -- explain / banks ------------------------------------------------------------------


def test_explain_with_fingerprint_uses_the_cache(run, cache_dir, record_factory):
    from autotrans.kernels.config import KernelConfig
    # an A100: no results for it ship with autotrans, so only this cache counts
    rec = record_factory((8192, 8192), 4, A100, seed=7)
    rec["config"] = classic("seed", 4).to_dict()   # a config every device can run
    rec["key"] = classic("seed", 4).key
    ResultCache(cache_dir).put(CacheKey(A100, space_id(), (8192, 8192), 4), rec)
    r = run("explain", "8192x8192", "--fingerprint", A100)
    assert r.returncode == 0, r.stderr
    assert f"8192x8192 float32: {classic('seed', 4).key}  [exact]" in r.stdout
    # another size has no exact entry: the nearest tuned shape, with its reason
    r = run("explain", "4096x4096", "--fingerprint", A100)
    assert r.returncode == 0, r.stderr
    assert "[nearest]" in r.stdout and "8192x8192" in r.stdout
    # other element sizes have nothing tuned: a default config
    r = run("explain", "4096x4096", "--dtype", "float16", "--fingerprint", A100)
    assert r.returncode == 0 and "[default]" in r.stdout
    KernelConfig.from_key(r.stdout.split(": ", 1)[1].split()[0])


def test_explain_on_an_h200_uses_the_shipped_results(run):
    r = run("explain", "4096x4096", "--fingerprint", H200)
    assert r.returncode == 0 and "[shipped]" in r.stdout, r.stdout + r.stderr


def test_explain_axes_prints_the_problem_and_what_permute_runs(run, cache_dir):
    from autotrans.core import layout
    from autotrans.tuning.strided import problem_key, strided_candidates
    from test_problem_keys import problem_record
    r = run("explain", "30x40", "--axes", "0,1", "--fingerprint", A100)
    assert r.returncode == 0 and r.stdout.splitlines() == ["30x40 float32 axes 0,1: copy of 4800 bytes",
                                                           "  runs: a device-to-device copy"], r.stdout + r.stderr
    r = run("explain", "4096x4096x2", "--axes", "1,0,2", "--dtype", "float16", "--fingerprint", H200)
    assert r.returncode == 0 and "transpose 4096x4096 of 4-byte elements" in r.stdout, r.stdout + r.stderr
    assert "runs: transpose() of 4096x4096: " in r.stdout and "[shipped]" in r.stdout, r.stdout
    # a rows problem: the untuned rule, then the config tuned for it once the cache has one
    shape, axes = (64, 512, 16, 64), (0, 2, 1, 3)
    p = layout.canonical(shape, (1048576, 2048, 128, 2), 2, axes, 16)
    r = run("explain", "64x512x16x64", "--axes", "0,2,1,3", "--dtype", "float16", "--fingerprint", A100)
    assert r.returncode == 0 and "[untuned]" in r.stdout and r.stdout.startswith(
        "64x512x16x64 float16 axes 0,2,1,3: rows:e16:"), r.stdout + r.stderr
    untuned = r.stdout.split("runs: ", 1)[1].split()[0]
    other = next(c for c in strided_candidates(p) if c.key != untuned)
    key = problem_key(p, A100)
    assert ResultCache(cache_dir).put_problem(key, problem_record(key, best=other, configs=[other], n_candidates=1))
    r = run("explain", "64x512x16x64", "--axes", "0,2,1,3", "--dtype", "float16", "--fingerprint", A100)
    assert r.returncode == 0 and f"runs: {other.key}  [tuned]" in r.stdout, r.stdout + r.stderr
    r = run("explain", "20x30x40", "--axes", "2,1,0", "--dtype", "complex64", "--conj", "--fingerprint", A100)
    assert r.returncode == 0 and ":strided:conj32  [untuned]" in r.stdout, r.stdout + r.stderr
    r = run("explain", "300x800", "--axes", "1,0", "--to", "bfloat16", "--fingerprint", A100)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == (
        "300x800 float32 axes 1,0 to bfloat16: tile:e4:300x800:ldi3200:ldo600:sci4:b():o2"), r.stdout + r.stderr
    assert ":strided:f32>bf16  [untuned]" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (["30x40", "--conj"], "--conj and --to need --axes"),
    (["3x4x5x6"], "expected MxN or BxMxN"),
    (["30x40", "--axes", "0,0"], "not a permutation"),
    (["30x40", "--axes", "0,1,2"], "--axes 0,1,2 of 30x40"),
    (["30x40", "--axes", "x"], "bad axes"),
    (["30x40", "--to", "float16"], "--conj and --to need --axes"),
    (["30x40", "--axes", "1,0", "--to", "int8"], "--axes 1,0 of 30x40 --to int8: casts between integers"),
])
def test_explain_axes_errors(run, args, needle):
    assert_user_error(run("explain", *args, "--fingerprint", A100), needle)


def test_banks_prints_a_32_way_conflict(run):
    r = run("banks", classic("tile", 4).key)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any("ld.shared" in line and line.rstrip().endswith("32-way") for line in lines), r.stdout
    assert "worst: load 1-way, store 32-way" in r.stdout
    r = run("banks", classic("padded", 4).key)
    assert r.returncode == 0 and "32-way" not in r.stdout and "worst: load 1-way, store 1-way" in r.stdout


def test_banks_traces_a_strided_strip_with_seams(run):
    r = run("banks", "shift:e2:128x64:t256:v16:r2:p2:xor:col:s4m:strided")
    assert r.returncode == 0, r.stderr
    assert "shift:e2:128x64:t256:v16:r2:p2:xor:col:s4m:strided: 256 threads" in r.stdout
    assert "worst: load " in r.stdout and ", mid " in r.stdout
    assert "races: none" in r.stdout


def test_sectors_prints_each_way_against_the_ideal(run):
    r = run("sectors", "vec:e4:64x64:t256:v16:r4:p0:xor:col", "512x256")
    assert r.returncode == 0, r.stderr
    assert "ideal 16384 sectors each way" in r.stdout and r.stdout.count("1.000 x ideal") == 3
    r = run("sectors", "shift:e1:128x128:t256:v16:r4:p4:none:col", "1025x1023", "--offset", "3")
    assert r.returncode == 0, r.stderr
    loads = float(r.stdout.split("loads")[1].split("x ideal")[0].split()[-1])
    assert loads > 1.2 and "of a copy" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (["vec:e4:64x64:t256:v16:r4:p0:xor:col", "1001x1000"], "not"),
    (["vec:e4:64x64:t256:v16:r4:p0:xor:col", "512x512", "--offset", "4"], "pointer alignment (16 B)"),
    (["shift:e1:128x128:t256:v16:r4:p4:none:col", "512x512", "--offset", "300"], "[0, 256)"),
    (["vec:e4:bad", "512x512"], "not a KernelConfig key"),
    (["vec:e4:64x64:t256:v16:r4:p0:xor:col", "0x5"], "bad shape"),
])
def test_sectors_errors_are_one_line(run, args, needle):
    assert_user_error(run("sectors", *args), needle)


# -- show ---------------------------------------------------------------------------------


def test_show_empty_cache(run, cache_dir):
    r = run("show", "--all")
    assert r.returncode == 0 and "no cached results" in r.stdout and str(cache_dir) in r.stdout


def _assert_rows_shown(out, populated):
    for name, shape, dtype in (("h200", "8192x8192", "float32"), ("a100", "4096x4096", "float16"),
                               ("stale", "16x1024x2048", "float64")):
        key, rec = populated[name]
        line = next((line for line in out.splitlines() if f" {shape} " in line), None)
        assert line is not None, (shape, out)
        assert dtype in line and rec["key"] in line and key.device in line
        assert f"{rec['time_us']:.1f}" in line and f"{rec['gbps']:.0f}" in line
        assert f"{rec['frac_memcpy']:.0%}" in line
        assert (f"{rec['key']} *" in line) == (name == "stale")
    assert "2025-10-01 12:00" in out
    assert "stale" in out


def test_show_without_gpu_lists_every_device(run, populated, no_gpu):
    r = run("show")
    assert r.returncode == 0, r.stderr
    note = r.stderr.strip().splitlines()
    assert len(note) == 1 and "no GPU" in note[0] and "every device" in note[0]
    _assert_rows_shown(r.stdout, populated)


def test_show_all(run, populated):
    r = run("show", "--all")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    _assert_rows_shown(r.stdout, populated)


def test_show_shipped_lists_autotrans_own_results_not_the_caches(run, populated, no_gpu):
    """show --shipped: the results shipped with autotrans (every model without
    a GPU), under their own title; the user's cache is not listed."""
    from autotrans.results.shipped import shipped_dir, shipped_entries, shipped_problems
    r = run("show", "--shipped")
    assert r.returncode == 0, r.stderr
    assert "shipped results of every device" in r.stderr
    assert f"shipped with autotrans: {shipped_dir()}" in r.stdout
    rows = [line for line in r.stdout.splitlines() if "│" in line]
    assert len(rows) == len(shipped_entries()) + len(shipped_problems()) > 0     # transposes, strided problems
    assert any(" 4096x4096 " in line and " float32 " in line for line in rows)      # GRID_ANCHORS
    assert A100 not in r.stdout and " 16x1024x2048 " not in r.stdout     # the cache's (populated)
    assert sum(" --axes " in line for line in rows) == len(shipped_problems())     # each problem's permutation


def test_show_cache_dir_option(run, populated, cache_dir, tmp_path):
    (tmp_path / "empty").mkdir()
    r = run("show", "--all", "--cache-dir", cache_dir / "results.sqlite", cwd=tmp_path / "empty")
    assert r.returncode == 0 and "8192x8192" in r.stdout


def test_a_cache_file_that_is_a_folder_warns_once(run, cache_dir):
    """Both tables' reads fail the same way: one warning line, not one a table."""
    (cache_dir / "results.sqlite").mkdir()
    r = run("show", "--all")
    assert r.returncode == 0 and "no cached results" in r.stdout, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not be read (it is a directory)" in lines[0], r.stderr


def test_show_a_corrupt_cache_warns_in_one_line(run, cache_dir):
    (cache_dir / "results.sqlite").write_bytes(b"this is not a database" * 100)
    r = run("show", "--all")
    assert r.returncode == 0, r.stderr
    assert "no cached results" in r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("autotrans: warning: ") and "corrupt" in lines[0]
    assert "Traceback" not in r.stderr


# -- export / import / clear ------------------------------------------------------------------


def test_export_everything_and_one_device(run, populated, tmp_path):
    r = run("export", "all.json")
    assert r.returncode == 0, r.stderr
    assert "exported 3 entries" in r.stdout
    doc = json.loads((tmp_path / "all.json").read_text())
    assert doc["format"] == "autotrans-cache"
    assert sorted(e["key"] for e in doc["entries"]) == sorted(k.text for k, _ in populated.values())
    r = run("export", "a100.json", "--device", A100)
    assert r.returncode == 0 and "exported 1 entry" in r.stdout
    doc = json.loads((tmp_path / "a100.json").read_text())
    assert [e["record"] for e in doc["entries"]] == [populated["a100"][1]]
    r = run("export", "none.json", "--device", "no such GPU")
    assert r.returncode == 0 and "exported 0 entries" in r.stdout
    assert "no entries for device" in r.stderr and A100 in r.stderr


def retimed(rec, factor):
    """``rec`` as if its best kernel took ``factor`` times as long."""
    return dict(rec, **{f: rec[f] * factor for f in ("time_us", "q1_us", "q3_us")})


@pytest.mark.parametrize("policy, counts, winner", [
    ("faster", (1, 1, 1), {"fast": "theirs", "slow": "ours"}),
    ("keep", (1, 0, 2), {"fast": "ours", "slow": "ours"}),
    ("replace", (1, 2, 0), {"fast": "theirs", "slow": "theirs"}),
])
def test_import_policies(run, populated, tmp_path, record_factory, policy, counts, winner):
    """Import an export holding: a faster H200 8192x8192 result, a slower A100
    result, and a new shape; the policy decides which survive."""
    other = ResultCache(tmp_path / "other")
    h_key, h_rec = populated["h200"]
    a_key, a_rec = populated["a100"]
    fast = dict(retimed(h_rec, 0.5), date="2025-12-24T00:00:00+00:00")
    slow = dict(retimed(a_rec, 2), date="2025-12-25T00:00:00+00:00")
    new_key = CacheKey(H200, space_id(), (3, 640, 480), 1)
    other.put(h_key, fast)
    other.put(a_key, slow)
    other.put(new_key, record_factory((3, 640, 480), 1, H200, seed=9))
    other.export_json(tmp_path / "theirs.json")

    args = ["import", "theirs.json"] + ([] if policy == "faster" else ["--policy", policy])
    r = run(*args)
    assert r.returncode == 0, r.stderr
    added, replaced, kept = counts
    assert f"{added} added, {replaced} replaced, {kept} kept" in r.stdout, r.stdout
    mine = ResultCache(tmp_path / "cache")
    assert mine.get(new_key) is not None
    assert mine.get(h_key)["date"] == (fast if winner["fast"] == "theirs" else h_rec)["date"]
    assert mine.get(a_key)["date"] == (slow if winner["slow"] == "theirs" else a_rec)["date"]
    assert len(mine.items()) == 4


def test_export_import_round_trip_into_an_empty_cache(run, populated, tmp_path):
    assert run("export", "all.json").returncode == 0
    r = run("import", str(tmp_path / "all.json"), "--cache-dir", tmp_path / "fresh")
    assert r.returncode == 0 and "3 added, 0 replaced, 0 kept" in r.stdout
    assert ResultCache(tmp_path / "fresh").items() == ResultCache(tmp_path / "cache").items()


def test_import_of_several_files_each_all_or_nothing(run, populated, tmp_path):
    """import takes several files (results-*.json of many nodes): each is
    merged whole; a missing one stops the command before any is read, and a
    bad one after good ones names those already imported."""
    assert run("export", "all.json").returncode == 0
    (tmp_path / "junk.json").write_text('{"entries": 3}')
    fresh = tmp_path / "fresh"
    assert_user_error(run("import", "all.json", "missing.json", "--cache-dir", fresh), "missing.json")
    assert ResultCache(fresh).items() == []
    r = run("import", "all.json", "junk.json", "--cache-dir", fresh)
    assert_user_error(r, "junk.json", "already imported: all.json")
    assert "3 added" in r.stdout and len(ResultCache(fresh).items()) == 3
    r = run("import", "all.json", str(tmp_path / "all.json"), "--cache-dir", fresh)
    assert r.returncode == 0 and r.stdout.count("0 added, 0 replaced, 3 kept") == 2, r.stdout
    assert_user_error(run("import", "-", "-", "--cache-dir", fresh), "once")


def test_clear_refuses_without_a_terminal(run, populated, cache_dir):
    r = run("clear")   # stdin is /dev/null
    assert_user_error(r, "--yes", "3 cached results")
    assert len(ResultCache(cache_dir).items()) == 3


def test_clear_answer_from_a_pipe_is_not_a_confirmation(run, populated, cache_dir):
    assert_user_error(run("clear", input="y\n"), "--yes")
    assert len(ResultCache(cache_dir).items()) == 3


def test_clear_one_device_then_everything(run, populated, cache_dir):
    r = run("clear", "--device", A100, "--yes")
    assert r.returncode == 0 and "removed 1 cached result " in r.stdout
    assert {k.device for k, _ in ResultCache(cache_dir).items()} == {H200}
    r = run("clear", "-y")
    assert r.returncode == 0 and "removed 2 cached results" in r.stdout
    assert ResultCache(cache_dir).items() == []
    r = run("clear")
    assert r.returncode == 0 and "nothing to clear" in r.stdout


def _damage_rows(cache_dir):
    """Add two rows that are not UTF-8 (a key, a value) beside the good ones."""
    import sqlite3
    con = sqlite3.connect(cache_dir / "results.sqlite")
    con.execute("INSERT INTO results_v1 VALUES (CAST(X'fffe41' AS TEXT), '{}')")
    good = con.execute("SELECT key FROM results_v1 ORDER BY key").fetchone()[0]
    con.execute("INSERT INTO results_v1 VALUES (?, CAST(X'7bff7d' AS TEXT))", (good + "x",))
    con.commit()
    con.close()


def test_rows_that_are_not_utf8_are_skipped_not_the_cache(run, populated, cache_dir, tmp_path):
    """One damaged row costs that row: show and export keep the rest (with one
    warning), import still writes, and clear removes every row, damaged too."""
    _damage_rows(cache_dir)
    r = run("show", "--all")
    assert r.returncode == 0 and "8192x8192" in r.stdout and "4096x4096" in r.stdout, r.stderr
    assert "skipped 2 invalid entries" in r.stderr and "Traceback" not in r.stderr
    r = run("export", "all.json")
    assert r.returncode == 0 and "exported 3 entries" in r.stdout, r.stderr
    r = run("import", "all.json")
    assert r.returncode == 0 and "3 kept" in r.stdout, (r.stdout, r.stderr)
    r = run("clear", "--yes")
    assert r.returncode == 0 and "removed 5 cached results" in r.stdout, (r.stdout, r.stderr)
    assert ResultCache(cache_dir).row_counts() == (0, 0)


def test_export_of_an_unreadable_cache_fails_and_keeps_the_file(run, cache_dir, tmp_path):
    """An export never replaces a file with an empty export of a cache it could not read."""
    (cache_dir / "results.sqlite").mkdir()
    backup = tmp_path / "backup.json"
    backup.write_text('{"precious": true}')
    assert_user_error(run("export", "backup.json"), "could not be read", "nothing was written")
    assert backup.read_text() == '{"precious": true}'


def test_clear_asks_on_a_terminal(populated, cache_dir, tmp_path):
    """With stdin on a real pseudo-terminal, clear asks; 'n' keeps everything, 'y' clears."""
    import pty
    import select
    import time

    env = dict(os.environ, AUTOTRANS_CACHE_DIR=str(cache_dir),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def session(answer):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "autotrans", "clear"], cwd=tmp_path, env=env,
                                stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        out, sent, deadline = b"", False, time.monotonic() + 120
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([master], [], [], 1)
                if ready:
                    try:
                        chunk = os.read(master, 4096)
                    except OSError:   # EIO: the child closed the terminal
                        break
                    if not chunk:
                        break
                    out += chunk
                    if not sent and b"[y/N]" in out:
                        os.write(master, answer + b"\n")
                        sent = True
                elif proc.poll() is not None:
                    break
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(master)
        return code, out.decode(errors="replace")

    code, out = session(b"n")
    assert code != 0 and "Remove 3 cached results" in out and "nothing removed" in out, out
    assert len(ResultCache(cache_dir).items()) == 3
    code, out = session(b"y")
    assert code == 0 and "removed 3 cached results" in out, out
    assert ResultCache(cache_dir).items() == []


# -- report -----------------------------------------------------------------------------------


def test_report_from_the_cache_without_gpu(run, populated, tmp_path, no_gpu):
    r = run("report", "8192x8192", "-o", "land.png")
    assert r.returncode == 0, r.stderr
    png = (tmp_path / "land.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000
    r = run("report", "16x1024x2048", "--dtype", "float64", "-o", "land.html")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "land.html").read_text()
    assert "data:image/png;base64,iVBORw0KGgo" in page
    assert "no GPU here: comparison bars skipped" in page
    assert populated["stale"][1]["key"] in page
    # default file name
    r = run("report", "4096x4096", "--dtype", "float16")
    assert r.returncode == 0 and (tmp_path / "autotrans-4096x4096-float16.png").is_file()


@pytest.mark.parametrize("target, why", [("nofolder/rows.json", "does not exist"),
                                         ("cache/results.sqlite", "cache's own file"), ("cache", "a directory")])
def test_bench_refuses_a_json_target_before_it_runs(run, tmp_path, cache_dir, target, why):
    """--json is checked first: no GPU is needed to hear that it cannot be written."""
    (cache_dir / "results.sqlite").write_bytes(b"")
    assert_user_error(run("bench", "64x64", "--json", target), why)
    assert (cache_dir / "results.sqlite").read_bytes() == b""


def test_report_rejects_unknown_picture_types(run, populated):
    assert_user_error(run("report", "8192x8192", "-o", "land.docx"), ".png")


def test_report_never_writes_through_a_link_onto_the_cache(run, populated, cache_dir, tmp_path, no_gpu):
    """-o naming a symlink to the cache database is refused; the cache is intact."""
    before = (cache_dir / "results.sqlite").read_bytes()
    (tmp_path / "evil.png").symlink_to(cache_dir / "results.sqlite")
    assert_user_error(run("report", "8192x8192", "-o", "evil.png"), "refusing to write the report to",
                      "cache's own file")
    assert (cache_dir / "results.sqlite").read_bytes() == before
    assert len(ResultCache(cache_dir).items()) == 3


# -- the cache folder is not a folder -----------------------------------------------------------


@pytest.fixture
def export_file(tmp_path, record_factory):
    """A real export file with one entry, made by another cache."""
    other = ResultCache(tmp_path / "other")
    assert other.put(CacheKey(A100, space_id(), (64, 64), 4), record_factory((64, 64), 4, A100, seed=11))
    assert other.export_json(tmp_path / "theirs.json") == 1
    return tmp_path / "theirs.json"


CACHE_COMMANDS = [["show"], ["show", "--all"], ["clear"], ["clear", "--yes"], ["export", "out.json"],
                  ["export", "-"], ["import", "theirs.json"], ["explain", "8x8", "--fingerprint", A100],
                  ["tune", "64x64", "--no-progress"], ["report", "8x8", "-o", "r.png"]]


@pytest.mark.parametrize("args", CACHE_COMMANDS, ids=" ".join)
def test_a_cache_dir_that_is_a_file_is_one_error(run, tmp_path, export_file, args):
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"my notes\n")
    r = run(*args, AUTOTRANS_CACHE_DIR=str(plain))
    assert_user_error(r, "$AUTOTRANS_CACHE_DIR", str(plain), "not a folder")
    assert r.stdout == ""
    assert plain.read_bytes() == b"my notes\n"
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "r.png").exists()


@pytest.mark.parametrize("args", [["show", "--all"], ["clear", "--yes"], ["export", "out.json"],
                                  ["import", "theirs.json"]], ids=" ".join)
def test_a_cache_dir_inside_a_file_is_one_error(run, tmp_path, export_file, args):
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"x")
    r = run(*args, "--cache-dir", plain / "sub")
    assert_user_error(r, "--cache-dir", "is inside", str(plain))
    assert plain.read_bytes() == b"x" and not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("args", [["show", "--all"], ["import", "theirs.json"]], ids=" ".join)
def test_an_empty_cache_dir_is_one_error(run, tmp_path, export_file, args):
    """--cache-dir '' names no folder: refused, nothing made in the working folder."""
    r = run(*args, "--cache-dir", "")
    assert r.returncode == 2 and "empty --cache-dir" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "results.sqlite").exists()


def test_the_cache_file_itself_stands_for_its_folder(run, populated, cache_dir):
    r = run("show", "--all", AUTOTRANS_CACHE_DIR=str(cache_dir / "results.sqlite"))
    assert r.returncode == 0, r.stderr
    assert "8192x8192" in r.stdout and "16x1024x2048" in r.stdout


# -- export to standard output ------------------------------------------------------------------


def test_export_to_stdout(run, populated, cache_dir, tmp_path):
    r = run("export", "-")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "-").exists()
    db = cache_dir / "results.sqlite"
    assert r.stderr.strip() == f"autotrans: exported 3 entries from {db} to standard output"
    assert run("export", "file.json").returncode == 0
    assert r.stdout == (tmp_path / "file.json").read_text()      # the very same document
    doc = json.loads(r.stdout)
    assert sorted(e["key"] for e in doc["entries"]) == sorted(k.text for k, _ in populated.values())
    r = run("export", "-", "--device", A100)
    assert r.returncode == 0 and "exported 1 entry " in r.stderr
    assert [e["key"] for e in json.loads(r.stdout)["entries"]] == [populated["a100"][0].text]


def test_export_to_stdout_imports_elsewhere(run, populated, tmp_path):
    r = run("export", "-")
    (tmp_path / "piped.json").write_text(r.stdout)
    r = run("import", "piped.json", "--cache-dir", tmp_path / "fresh")
    assert r.returncode == 0 and "3 added" in r.stdout, r.stderr
    assert ResultCache(tmp_path / "fresh").items() == ResultCache(tmp_path / "cache").items()


def test_import_from_standard_input(run, populated, tmp_path):
    """export - | import -: the same entries, and a bad stream is one error line."""
    r = run("import", "-", "--cache-dir", tmp_path / "fresh", input=run("export", "-").stdout)
    assert r.returncode == 0 and "imported standard input" in r.stdout and "3 added" in r.stdout, r.stderr
    assert ResultCache(tmp_path / "fresh").items() == ResultCache(tmp_path / "cache").items()
    assert_user_error(run("import", "-", "--cache-dir", tmp_path / "fresh", input="{not json"),
                      "<stdin> is not an autotrans cache export")


@pytest.mark.parametrize("name, why", [("folder", "is a folder"), ("/dev/null", "not a regular file"),
                                       ("missing.json", "no such file")])
def test_import_of_what_is_not_a_file_names_what_it_is(run, tmp_path, name, why):
    (tmp_path / "folder").mkdir()
    assert_user_error(run("import", name), why)


@pytest.mark.parametrize("target", ["cache/results.sqlite", "cache", "/dev/null"])
def test_export_refuses_targets_that_are_not_export_files(run, populated, cache_dir, target):
    before = (cache_dir / "results.sqlite").read_bytes()
    assert_user_error(run("export", target))
    assert (cache_dir / "results.sqlite").read_bytes() == before
    assert len(ResultCache(cache_dir).items()) == 3


# -- text from caches and files reaches the terminal neutralised ---------------------------------

CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_show_prints_markup_in_device_names_literally(run, cache_dir, record_factory):
    odd = "GPU [/] [bold red]x[/bold red] [link=http://e.vil]|sm_90|132sm|driver 1|cuda 13.0"
    assert ResultCache(cache_dir).put(CacheKey(odd, space_id(), (64, 64), 4),
                                      record_factory((64, 64), 4, odd, seed=12))
    r = run("show", "--all")
    assert r.returncode == 0, r.stderr
    assert "GPU [/] [bold red]x[/bold red] [link=http://e.vil]|sm_90" in r.stdout, r.stdout


def test_import_of_a_hostile_export_is_neutralised(run, cache_dir, tmp_path):
    """A file name and entries made to drive the terminal: every line comes out printable."""
    name = "evil\x1b]0;owned\x07\x1b[2J.json"
    evil_key = "v1|\x1b]0;owned\x07|e4|1x8x8|\u202eNVIDIA|sm_90|1sm|driver 1|cuda 1"
    doc = {"format": "autotrans-cache", "schema": 1, "entries": [{"key": evil_key, "record": {"x": 1}}]}
    (tmp_path / name).write_text(json.dumps(doc))   # the escapes are JSON \u001b: decoded on read
    r = run("import", name)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "0 added" in r.stdout, out
    assert "evil\\x1b]0;owned\\x07\\x1b[2J.json" in r.stdout and "\\x1b" in r.stderr, out
    assert not CONTROL.search(out.replace("\n", "")), repr(out)
    assert ResultCache(cache_dir).items() == []


def test_export_warning_names_devices_neutralised(run, populated):
    r = run("export", "none.json", "--device", "no\x1b[31mGPU")
    assert r.returncode == 0
    assert "no entries for device" in r.stderr and A100 in r.stderr
    assert not CONTROL.search(r.stderr.replace("\n", "")), repr(r.stderr)


# -- tune --from: the capture workflow --------------------------------------------------------


@pytest.fixture
def capture_file(tmp_path, monkeypatch):
    """A capture file written by the real capture writer: 64x96 float32 (twice),
    2x32x48 float16 and 64x96 float16."""
    from autotrans.api import capture
    path = tmp_path / "shapes.jsonl"
    monkeypatch.setenv(capture.ENV, str(path))
    monkeypatch.setattr(capture, "_seen", set())
    for bmn, dt in [((1, 64, 96), "float32"), ((2, 32, 48), "float16"), ((1, 64, 96), "float16")]:
        capture.note(bmn, np.dtype(dt))
    with path.open("a") as f:   # another process met 64x96 float32 too
        f.write(json.dumps({"shape": [1, 64, 96], "dtype": "float32"}) + "\n")
    assert len(path.read_text().splitlines()) == 4
    return path


def test_tune_jobs_are_deduplicated_in_order(capture_file):
    from autotrans.api import capture
    from autotrans.cli.tune import jobs
    got = jobs([(64, 96), (128, 128)], np.dtype("float32"), capture.read(capture_file))
    assert [j.name for j in got] == ["64x96 float32", "128x128 float32", "2x32x48 float16", "64x96 float16"]


def test_one_progress_bar_over_all_jobs(capsys):
    from autotrans.cli.tune import _bar
    with _bar(True, 3) as step:
        for name in ("8x8 float32", "16x16 float16", "4x8x8 float64"):
            with step(name):
                print(f"summary {name}")
    out, err = capsys.readouterr()
    assert out.splitlines() == ["summary 8x8 float32", "summary 16x16 float16", "summary 4x8x8 float64"]
    assert "3/3" in err and err.count("/3") == 1, err      # one bar, finished
    with _bar(False, 3) as step:
        with step("x"):
            pass
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("content, needle", [
    (None, "no such capture file"),
    ('{"shape": [64, 96], "dtype": "float32"}\n{"shape": [64, 0], "dtype": "float32"}\n', "shapes.jsonl:2"),
    ('{"shape": [64, 96], "dtype": "float32"}\nnot json\n', "shapes.jsonl:2"),
    ('{"shape": [64, 96], "dtype": "(2,2)f4"}\n', "shapes.jsonl:1"),
    ('{"shape": [64, 96]}\n', "shapes.jsonl:1"),
    ("", "lists no shapes"),
    (b"\xff\xfe\x00garbage\n", "shapes.jsonl:1"),
])
def test_tune_from_a_bad_capture_file_is_one_error(run, tmp_path, cache_dir, content, needle):
    path = tmp_path / "shapes.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert_user_error(run("tune", "--from", "shapes.jsonl", "--no-progress"), needle)
    assert not (cache_dir / "results.sqlite").exists()


def test_tune_from_a_folder_is_one_error(run, tmp_path):
    (tmp_path / "d").mkdir()
    assert_user_error(run("tune", "--from", "d"), "not a regular file")


def test_tune_from_without_gpu(run, no_gpu, capture_file, cache_dir):
    assert_user_error(run("tune", "--from", capture_file, "--no-progress"), "no GPU")
    assert not (cache_dir / "results.sqlite").exists()


@pytest.fixture
def problem_capture(tmp_path, monkeypatch):
    """A capture file holding one strided problem (a pitched float32 view
    transposed), written by the real capture writer."""
    from autotrans.api import capture
    from autotrans.api.permute import view_problem
    path = tmp_path / "problems.jsonl"
    monkeypatch.setenv(capture.ENV, str(path))
    monkeypatch.setattr(capture, "_seen", set())
    problem = view_problem((300, 800), "float32", (1, 0), (12, 712))
    capture.note_problem(*problem)
    monkeypatch.delenv(capture.ENV)
    return path, problem[0]


def test_tune_from_a_file_of_problems_only_needs_a_gpu(run, no_gpu, problem_capture, cache_dir):
    path, _ = problem_capture
    assert_user_error(run("tune", "--from", path, "--no-progress"), "no GPU")
    assert not (cache_dir / "results.sqlite").exists()


@pytest.mark.gpu
def test_tune_from_a_capture_file_tunes_its_strided_problems_too(run, problem_capture, cache_dir):
    from autotrans.results.keys import problem_text
    path, problem = problem_capture
    r = run("tune", "--from", path, "--no-progress", timeout=1800)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(problem_text(problem)) and "of memcpy" in r.stdout
    assert [k.problem for k, _ in ResultCache(cache_dir).problem_items()] == [problem]


@pytest.mark.gpu
def test_tune_from_a_capture_file(run, capture_file, cache_dir):
    r = run("tune", "96x64", "--from", capture_file, "--no-progress", timeout=1800)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["96x64 float32", "64x96 float32", "2x32x48 float16",
                                                      "64x96 float16"], r.stdout
    assert all("of memcpy" in line for line in lines)
    keys = {(k.shape, k.elem_bytes) for k, _ in ResultCache(cache_dir).items()}
    assert keys == {((1, 96, 64), 4), ((1, 64, 96), 4), ((2, 32, 48), 2), ((1, 64, 96), 2)}


def test_sectors_counts_a_strided_key_on_a_dense_shape(run):
    r = run("sectors", "shift:e2:64x64:t256:v16:r2:p2:none:col:s4:strided", "517x1029")
    assert r.returncode == 0, r.stderr
    assert "517x1029: 1063986 bytes" in r.stdout and "x ideal" in r.stdout
    assert_user_error(run("sectors", "shift:e2:64x64:t256:v16:r2:p2:none:col:s4:strided", "517x1029",
                          "--offset", "2"), "at offset 0 only")
