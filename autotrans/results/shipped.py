"""Results shipped with autotrans: the export files of the repository's
``cache/`` folder (or the installed package's ``shipped/``)."""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

from ..core.device import DeviceId
from .errors import CacheWarning
from .keys import CacheKey, ProblemKey
from .record import TuneRecord
from .transfer import read_export_all, warn_skipped


def shipped_dir() -> Path:
    """The repository's top-level ``cache/`` folder, or the package's ``shipped/``."""
    here = Path(__file__).resolve().parent.parent
    repo = here.parent / "cache"
    return repo if repo.is_dir() else here / "shipped"


def shipped_entries(folder: str | Path | None = None) -> list[tuple[CacheKey, TuneRecord]]:
    """The valid entries of the ``*.json`` exports in ``folder`` (default
    :func:`shipped_dir`), read once per process and folder. Files that are not
    exports are skipped with a warning each; invalid entries with one warning."""
    return list(_shipped(_folder(folder))[0])


def shipped_problems(folder: str | Path | None = None) -> list[tuple[ProblemKey, TuneRecord]]:
    """The valid strided problems' results of the same exports (their
    ``"problems"`` rows), read with the entries, once per process and folder."""
    return list(_shipped(_folder(folder))[1])


def for_device(pairs, fingerprint: str | None) -> list:
    """The shipped (key, record) pairs that a device with this fingerprint
    uses: those tuned on its model (DeviceId.hardware, any driver and
    toolkit), then, for the keys its model's lack, those of its siblings
    (the same architecture and SM count, by name: source_models); all of
    them where ``fingerprint`` is None."""
    pairs = list(pairs)
    if fingerprint is None:
        return pairs
    out, have = [], set()
    for hw in source_models({k.device_id for k, _ in pairs}, DeviceId.from_text(fingerprint)):
        mine = [(k, r) for k, r in pairs if k.hardware == hw and _slot(k) not in have]
        have.update(_slot(k) for k, _ in mine)
        out.extend(mine)
    return out


def source_models(tuned_on, dev: DeviceId) -> list[str]:
    """The models (DeviceId.hardware) whose shipped results ``dev`` uses, of
    the DeviceIds ``tuned_on``, in order: its own where shipped, then its
    siblings, the same architecture and SM count, by name (an H100 SXM and an
    H200 are one GH100 chip with other memory: on an H100 the H200's results
    ran at 0.949 of the fastest of each shape's pool, the built-in defaults
    at 0.860, NOTES 55; its own results at 0.967 of tuned over the zoo
    against the H200's 0.963, NOTES 56)."""
    models = {d.hardware: d for d in tuned_on}
    own = [dev.hardware] if dev.hardware in models else []
    return own + sorted(h for h, d in models.items() if h != dev.hardware and (d.arch, d.sms) == (dev.arch, dev.sms))


def _slot(key) -> str:
    """What a key is a result for, whichever device tuned it: its text less
    the device at its end (CacheKey.text and ProblemKey.text end in it)."""
    return key.text[:len(key.text) - len(key.device)]


def _folder(folder) -> str:
    return str((Path(folder) if folder is not None else shipped_dir()).resolve())


@functools.lru_cache(maxsize=None)
def _shipped(folder: str) -> tuple:
    entries, rows, problems = [], [], []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            good, bad, good_rows, bad_rows = read_export_all(path)
        except (OSError, ValueError) as exc:
            warnings.warn(f"skipping shipped cache file {path}: {exc}", CacheWarning, stacklevel=4)
            continue
        entries.extend(good)
        rows.extend(good_rows)
        problems.extend(f"{path.name} {p}" for p in bad + bad_rows)
    warn_skipped(problems, f"the shipped results in {folder}", stacklevel=4)
    return tuple(entries), tuple(rows)
