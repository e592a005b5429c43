"""AUTOTRANS_CAPTURE: shapes served without an exact result are appended once,
safely from many processes, and read back validated."""
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


@pytest.mark.parametrize("text, why", [('{"shape": [0, 5], "dtype": "float32"}', "empty"),
                                        ('{"shape": [2.5, 3], "dtype": "float32"}', "integers"),
                                        ('{"shape": [5, 5], "dtype": "(2,2)f4"}', "sub-array"),
                                        ('[1, 2]', "capture line"), ("not json", "capture line")])
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
