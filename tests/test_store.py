"""The kernel store and the folders autotrans writes: private, owned, and
nothing loaded or run unless its bytes match its name. Real files, real nvcc."""
import os
import stat
import warnings

import pytest

from autotrans.build import nvcc
from autotrans.build.compile import compile_configs
from autotrans.build.store import Store, StoreError, _usable, digest
from autotrans.core.paths import UnsafePath, atomic_write, private_dir
from autotrans.kernels.config import classic

ROOT = os.getuid() == 0


def test_private_dir_is_made_0700_and_objects_are_checked(tmp_path):
    store = Store(tmp_path / "k")
    assert stat.S_IMODE(os.stat(tmp_path / "k").st_mode) == 0o700
    name = store.put(b"cubin bytes")
    assert name == digest(b"cubin bytes") and store.get(name) == b"cubin bytes"
    path = store.root / "objects" / name[:2] / name
    path.chmod(0o600)
    path.write_bytes(b"planted")
    with pytest.raises(StoreError, match="does not match its hash"):
        store.get(name)


@pytest.mark.parametrize("bad", ["../../etc/passwd", "/tmp/x.cubin", "ab" * 31, "", None, "A" * 64])
def test_object_names_are_hashes_never_paths(tmp_path, bad):
    store = Store(tmp_path)
    with pytest.raises(StoreError, match="not a kernel store object name"):
        store.get(bad)
    store.index_put("cubin", "k", {"object": bad})
    assert store.index_get("cubin", "k") is None


def test_a_folder_writable_by_others_is_refused(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    with pytest.raises(UnsafePath, match="other users"):
        private_dir(d)


@pytest.mark.skipif(not ROOT, reason="needs root to give a folder to another user")
def test_a_folder_of_another_user_is_refused(tmp_path):
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, 65534, 65534)
    with pytest.raises(UnsafePath, match="another user"):
        private_dir(d)
    with pytest.raises(UnsafePath):
        _usable(d)


def test_an_unusable_folder_falls_back_to_a_private_temporary_one(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        root = _usable(blocker / "kernels")
    assert root != blocker / "kernels" and root.is_dir()
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700 and os.stat(root).st_uid == os.getuid()
    assert any("cannot be written" in str(w.message) for w in seen)
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        assert _usable(blocker / "other") != root      # not a predictable shared name


def test_atomic_write_replaces_whole_files(tmp_path):
    p = tmp_path / "f"
    atomic_write(p, b"one")
    atomic_write(p, b"two", 0o600)
    assert p.read_bytes() == b"two" and stat.S_IMODE(os.stat(p).st_mode) == 0o600
    assert [q.name for q in tmp_path.iterdir()] == ["f"]


def test_nvcc_takes_paths_with_spaces_and_quotes(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "a temp 'dir'"))
    (tmp_path / "a temp 'dir'").mkdir()
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    inc = tmp_path / "it's a \"dir\""
    inc.mkdir()
    (inc / "h.cuh").write_text("#define AT_ANSWER 42\n")
    src = '#include "h.cuh"\nextern "C" __global__ void k(int* p) { *p = AT_ANSWER; }\n'
    blob, log = nvcc.run({"u.cu": src}, "u.cu", ["-cubin", "-arch=sm_90"], includes=[inc])
    assert blob and blob[:4] == b"\x7fELF", log


def test_a_tampered_cubin_is_refused(tmp_path):
    cfg = classic("padded", 4)
    first = compile_configs([cfg], "sm_90", root=tmp_path)[cfg.key]
    path = Store(tmp_path).root / "objects" / first.object[:2] / first.object
    path.write_bytes(b"\x7fELF planted")
    with pytest.raises(StoreError):
        first.image()
