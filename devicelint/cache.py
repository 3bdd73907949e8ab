"""Per-file results keyed by the file's bytes, the bytes of the project modules its analysis
read, devicelint's version and the effective rule set.

A file's analysis reads the modules of its project that it imports (devicelint.project), so its
findings depend on them too. Two entries per file: under the key of its own bytes, the list of
project files the last analysis read; under that key combined with those files' digests, the
findings. Changing an imported module changes the combined key, and the file is linted again.
(A file that did not exist when the importer was linted - an import that then led outside the
project - is not in the list: the importer is linted again only when it changes itself.)

Entries live under ``.devicelint_cache/`` (a ``.gitignore`` inside keeps them out of git) or
``--cache-dir``. A changed file, rule set or version simply misses; an unreadable or corrupt
entry is treated as a miss, never as an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from devicelint import __version__
from devicelint.findings import Finding, finding_from_dict

DEFAULT_DIRECTORY = ".devicelint_cache"


def _code_fingerprint() -> str:
    """Size and mtime of devicelint's own modules: an edited checkout or editable install
    changes its rules without changing its version, and must not be answered from old results."""
    package = Path(__file__).resolve().parent
    entries = []
    for path in sorted(package.rglob("*.py")):
        try:
            status = path.stat()
        except OSError:
            continue
        entries.append(f"{path.relative_to(package)}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.sha256("\n".join(entries).encode()).hexdigest()


class ResultCache:
    def __init__(self, directory: Path, codes: Sequence[str], verbose: bool = False, cross_file: bool = True) -> None:
        self.directory = directory
        settings = json.dumps(
            {"version": __version__, "code": _code_fingerprint(), "codes": sorted(codes), "verbose": verbose, "cross_file": cross_file},
            sort_keys=True,
        )
        self._salt = hashlib.sha256(settings.encode()).digest()
        self._ready = False

    def key(self, data: bytes, *, notebook: bool = False) -> str:
        """The entry for a file's bytes; a notebook's differ from the same bytes read as Python."""
        kind = b"notebook\x00" if notebook else b""
        return hashlib.sha256(self._salt + kind + data).hexdigest()

    def with_reads(self, key: str, reads: Sequence[str], digests: dict[str, str]) -> str:
        """The key of a file's findings: its own key and the digest of each project file its
        analysis read (``digests`` memoises them for the run)."""
        if not reads:
            return key
        combined = hashlib.sha256(key.encode())
        for path in reads:
            combined.update(b"\x00" + path.encode("utf-8", "surrogateescape") + b"\x00" + file_digest(path, digests).encode())
        return combined.hexdigest()

    def get_reads(self, key: str) -> Optional[list[str]]:
        """The project files the last analysis of the file with ``key`` read, if recorded."""
        try:
            with open(self._entry(self._reads_key(key)), encoding="utf-8") as handle:
                reads = json.load(handle)["reads"]
            return [str(path) for path in reads]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put_reads(self, key: str, reads: Sequence[str]) -> None:
        self._write(self._reads_key(key), {"reads": list(reads)})

    @staticmethod
    def _reads_key(key: str) -> str:
        return hashlib.sha256(b"reads\x00" + key.encode()).hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> Optional[list[Finding]]:
        try:
            with open(self._entry(key), encoding="utf-8") as handle:
                items = json.load(handle)
            return [finding_from_dict(item, path) for item in items]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, findings: Sequence[Finding]) -> None:
        payload = [{**finding.to_dict(), "related": [vars(related) for related in finding.related]} for finding in findings]
        self._write(key, payload)

    def _write(self, key: str, payload: object) -> None:
        try:
            self._prepare()
            entry = self._entry(key)
            entry.parent.mkdir(exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(payload, handle)
            os.replace(temporary, entry)
        except OSError:
            pass  # a read-only or full disk costs speed, not correctness

    def _prepare(self) -> None:
        if self._ready:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# created by devicelint\n*\n", encoding="utf-8")
        self._ready = True


def file_digest(path: str, digests: dict[str, str]) -> str:
    """The SHA-256 of a file's bytes, ``"missing"`` when it cannot be read (memoised)."""
    known = digests.get(path)
    if known is None:
        try:
            known = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            known = "missing"
        digests[path] = known
    return known
