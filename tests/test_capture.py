"""AUTOTRANS_CAPTURE: shapes served without an exact result are appended once,
safely from many processes, and read back validated."""
import os
import subprocess
import sys

import numpy as np
import pytest

from autotrans.api import capture


def test_note_appends_once_per_shape_and_read_deduplicates(tmp_path, monkeypatch):
    path = tmp_path / "seen.jsonl"
    monkeypatch.setenv(capture.ENV, str(path))
    monkeypatch.setattr(capture, "_seen", set())
    for _ in range(3):
        capture.note((1, 17, 100003), "float16")
    capture.note((4, 64, 64), np.dtype("int8"))
    assert len(path.read_text().splitlines()) == 2
    assert capture.read(path) == [((1, 17, 100003), np.dtype("float16")), ((4, 64, 64), np.dtype("int8"))]


def test_note_without_the_variable_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(capture.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    capture.note((1, 8, 8), "float32")
    assert list(tmp_path.iterdir()) == []


def test_many_processes_append_whole_lines(tmp_path):
    path = tmp_path / "seen.jsonl"
    code = ("import sys; from autotrans.api import capture\n"
            "for i in range(200): capture.note((1, 1 + i, int(sys.argv[1])), 'float32')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(7 + k)], env={"AUTOTRANS_CAPTURE": str(path),
             "PATH": "/usr/bin:/bin"}) for k in range(6)]
    assert all(p.wait() == 0 for p in procs)
    got = capture.read(path)
    assert len(path.read_text().splitlines()) == 1200 and len(got) == 1200



_NOTE = "from autotrans.api import capture; capture.note((1, 64, 64), 'float32')"


def test_note_to_a_fifo_neither_blocks_nor_writes(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    env = {"AUTOTRANS_CAPTURE": str(fifo), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", _NOTE], env=env, timeout=60, check=True)   # no reader
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        subprocess.run([sys.executable, "-c", _NOTE], env=env, timeout=60, check=True)
        assert os.read(reader, 100) == b""   # a reader there: still nothing written
    finally:
        os.close(reader)


@pytest.mark.parametrize("text, why", [('{"shape": [0, 5], "dtype": "float32"}', "empty"),
                                        ('{"shape": [2.5, 3], "dtype": "float32"}', "integers"),
                                        ('{"shape": [5, 5], "dtype": "(2,2)f4"}', "sub-array"),
                                        ('[1, 2]', "capture line"), ("not json", "capture line"),
                                        ('{"shape": [5, 5], "dtype": null}', "dtype None names no type"),
                                        ("[" * 100000 + "]" * 100000, "recursion")])
def test_read_names_the_bad_line(tmp_path, text, why):
    path = tmp_path / "c.jsonl"
    path.write_text('{"shape": [8, 8], "dtype": "int8"}\n' + text + "\n")
    with pytest.raises(ValueError, match=rf"c.jsonl:2: .*{why}"):
        capture.read(path)


def test_read_refuses_what_is_not_a_regular_file(tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        capture.read(tmp_path)
    with pytest.raises(ValueError, match="not a regular file"):
        capture.read("/dev/zero")


# -- permute()'s strided problems -----------------------------------------------------------

def _problems():
    from autotrans.api.permute import permutation_problem
    rows = permutation_problem((64, 512, 16, 64), "float16", (0, 2, 1, 3))
    cast = permutation_problem((300, 700), "float32", (1, 0), to="float16")
    conj = permutation_problem((300, 700), "complex64", (1, 0), conj=True)
    return [rows, cast, conj]


def test_note_problem_appends_once_and_read_all_gives_shapes_and_problems_apart(tmp_path, monkeypatch):
    path = tmp_path / "seen.jsonl"
    monkeypatch.setenv(capture.ENV, str(path))
    monkeypatch.setattr(capture, "_seen", set())
    probs = _problems()
    for _ in range(2):
        for p in probs:
            capture.note_problem(*p)
    capture.note((1, 8, 8), "int8")
    assert len(path.read_text().splitlines()) == 4
    shapes, got = capture.read_all(path)
    assert shapes == capture.read(path) == [((1, 8, 8), np.dtype("int8"))]
    assert got == capture.read_problems(path) == probs
    assert [c for _, c, _ in got] == ["none", "f32>f16", "none"] and got[2][2] == "conj32"


@pytest.mark.parametrize("line, why", [
    ({"problem": "tile:e4:not-a-problem", "cast": "none", "epilogue": "none"}, "capture line"),
    ({"problem": None, "cast": "none", "epilogue": "none"}, "capture line"),
    ({"cast": "none", "epilogue": "none", "problem": "P", "extra": 1}, "problem, cast and epilogue"),
    ({"problem": "P", "cast": "f32>bf16", "epilogue": "none"}, "does not convert"),     # no cast's sizes
    ({"problem": "P", "cast": "none", "epilogue": "conj99"}, "epilogue must be"),
])
def test_a_bad_problem_line_is_named(tmp_path, line, why):
    import json

    from autotrans.results.keys import problem_text
    text = problem_text(_problems()[0][0])
    line = {k: (text if v == "P" else v) for k, v in line.items()}
    path = tmp_path / "c.jsonl"
    path.write_text('{"shape": [8, 8], "dtype": "int8"}\n' + json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=rf"c.jsonl:2: .*{why}"):
        capture.read_all(path)
