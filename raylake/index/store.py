"""The index directory: layout, atomic publication, and loading.

Layout (documented in the README)::

    INDEX_DIR/
      CURRENT                 name of the live build folder (replaced atomically)
      build-<stamp>/
        manifest.json         format version, model, parameters, counts, per-file fingerprints
        tables.parquet        table_id, path, n_rows, n_cols, sha256, text, part
        columns.parquet       column_id, table_id, path, position, name, profile fields
        values.parquet        value (normalised), column_id — the value index
        edges.parquet         kind, src_table, dst_table, src_column, dst_column, score, mapping, ...
        parts.parquet         table_id, path, part (METIS)
        cross_part_edges.parquet
        signatures.npy        (C, num_perm) uint32 MinHash signatures
        emb_header.npy emb_sample.npy emb_table.npy    float32, L2-normalised
        columns_header.faiss columns_sample.faiss tables.faiss

A build writes a new ``build-*`` folder completely, fsyncs it, and only then replaces
``CURRENT`` with ``os.replace`` (atomic on POSIX and Windows). A crash or Ctrl-C at any
moment leaves the previous ``CURRENT`` pointing at the previous, complete build. While a
build writes ``.tmp-build-*`` it holds an exclusive lock on the folder's ``.owner.lock``;
every ``raylake index`` run starts by removing the ``.tmp-build-*`` folders whose lock no
live process holds (a killed build's), so concurrent builds never lose each other's work.
"""
from __future__ import annotations

import json
import os
import shutil
import time
import uuid

try:
    import fcntl
except ImportError:  # Windows: builds are told apart by the pid they record
    fcntl = None

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from raylake.config import FORMAT_VERSION
from raylake.errors import IndexMissingError, IndexVersionError

CURRENT = "CURRENT"
_LOCK = ".owner.lock"  # held (flock) by the writing process; its text is that process's id
_OWNER = ".owner.pid"  # what builds before the lock recorded
_STAGING = ".tmp-new-"  # a build folder before its lock is taken
_GRACE_S = 60  # a lock-less staging folder younger than this may be one being created right now
ARRAYS = ("signatures", "emb_header", "emb_sample", "emb_table")
FAISS = {"columns_header": "emb_header", "columns_sample": "emb_sample", "tables": "emb_table"}


def current_build(index_dir: str) -> str | None:
    """Absolute path of the live build folder, or None when there is no index."""
    try:
        with open(os.path.join(index_dir, CURRENT), encoding="utf-8") as fh:
            name = fh.read().strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    path = os.path.join(index_dir, name)
    return path if name and os.path.isdir(path) else None


def read_manifest(index_dir: str, *, check_version: bool = True) -> tuple[str, dict]:
    build = current_build(index_dir)
    if build is None:
        raise IndexMissingError(f"no index in {index_dir!r}: run `raylake index LAKE --index-dir {index_dir}` first")
    try:
        with open(os.path.join(build, "manifest.json"), encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError) as exc:
        raise IndexMissingError(f"the index in {index_dir!r} is unreadable ({exc}); re-run `raylake index`") from None
    if check_version and manifest.get("format_version") != FORMAT_VERSION:
        raise IndexVersionError(
            f"the index in {index_dir!r} has format {manifest.get('format_version')!r}, this raylake reads format "
            f"{FORMAT_VERSION}: rebuild it with `raylake index LAKE --index-dir {index_dir}`"
        )
    return build, manifest


class BuildWriter:
    """Writes one build folder and publishes it atomically with :meth:`commit`."""

    def __init__(self, index_dir: str):
        self.index_dir = os.path.abspath(index_dir)
        os.makedirs(self.index_dir, exist_ok=True)
        self.name = f"build-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        self.tmp = os.path.join(self.index_dir, f".tmp-{self.name}")
        # the folder gets its build name only once locked: a .tmp-build-* without a lock is a dead one's
        staging = os.path.join(self.index_dir, f"{_STAGING}{uuid.uuid4().hex[:8]}")
        os.makedirs(staging)
        self._lock = open(os.path.join(staging, _LOCK), "w")
        if fcntl is not None:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX)  # released by the kernel when this process dies
        self._lock.write(str(os.getpid()))
        self._lock.flush()
        if fcntl is None:
            self._lock.close()  # Windows renames no folder with an open file in it; the pid is the claim
        os.rename(staging, self.tmp)

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def table(self, name: str, table: pa.Table) -> None:
        pq.write_table(table, self.path(f"{name}.parquet"), compression="zstd")

    def array(self, name: str, arr: np.ndarray) -> None:
        np.save(self.path(f"{name}.npy"), arr, allow_pickle=False)

    def faiss(self, name: str, vectors: np.ndarray) -> None:
        import faiss

        index = faiss.IndexFlatIP(vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else 1)
        if len(vectors):
            index.add(np.ascontiguousarray(vectors, np.float32))
        faiss.write_index(index, self.path(f"{name}.faiss"))

    def json(self, name: str, obj) -> None:
        with open(self.path(name), "w", encoding="utf-8") as fh:
            json.dump(obj, fh, indent=1, sort_keys=True, default=str)

    def commit(self) -> str:
        for entry in os.scandir(self.tmp):
            if entry.name != _LOCK:
                with open(entry.path, "rb") as fh:
                    os.fsync(fh.fileno())
        final = os.path.join(self.index_dir, self.name)
        os.rename(self.tmp, final)  # still locked: no other build's cleanup can take it for a dead one's
        os.unlink(os.path.join(final, _LOCK))
        self._release()
        pointer = os.path.join(self.index_dir, f".{CURRENT}.{uuid.uuid4().hex[:8]}")
        with open(pointer, "w", encoding="utf-8") as fh:
            fh.write(self.name + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(pointer, os.path.join(self.index_dir, CURRENT))
        _fsync_dir(self.index_dir)
        cleanup(self.index_dir)
        return final

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if not self._lock.closed:
            self._lock.close()  # closing drops the flock


def update_manifest(build: str, manifest: dict) -> None:
    """Rewrite a build's manifest in place, atomically (used when only fingerprints moved)."""
    tmp = os.path.join(build, f".manifest.{uuid.uuid4().hex[:8]}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True, default=str)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, os.path.join(build, "manifest.json"))


def cleanup(index_dir: str, keep: int = 2) -> None:
    """Remove build folders that are neither among the ``keep`` newest (the live one and its
    predecessor, which readers opened before the swap may still use) nor being written."""
    live = current_build(index_dir)
    builds = sorted((e for e in os.scandir(index_dir) if e.is_dir() and e.name.startswith("build-")), key=lambda e: e.stat().st_mtime, reverse=True)
    recent = {e.path for e in builds[:keep]} | {live}
    for entry in os.scandir(index_dir):
        if entry.is_dir() and entry.path not in recent and entry.name.startswith("build-"):
            shutil.rmtree(entry.path, ignore_errors=True)
    clear_stale(index_dir)


def clear_stale(index_dir: str) -> list[str]:
    """Remove what killed builds left in ``index_dir`` (``.tmp-build-*`` folders no live build
    holds, old ``CURRENT`` pointer files); returns the folder names removed. Safe while other
    builds run: a folder whose lock is held is theirs."""
    removed = []
    try:
        entries = list(os.scandir(index_dir))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for entry in entries:
        if entry.name.startswith((".tmp-build-", _STAGING)) and entry.is_dir(follow_symlinks=False) and not _in_use(entry.path):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.name)
        elif entry.name.startswith(f".{CURRENT}.") and _older_than(entry.path, _GRACE_S):
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass
    return removed


def _in_use(tmp: str) -> bool:
    """Whether a live build still writes ``tmp``."""
    lock = os.path.join(tmp, _LOCK)
    try:
        fh = open(lock, "r+")
    except FileNotFoundError:
        legacy = os.path.join(tmp, _OWNER)
        if os.path.exists(legacy):
            return _pid_alive(legacy)
        return os.path.basename(tmp).startswith(_STAGING) and not _older_than(tmp, _GRACE_S)  # its lock is being taken
    except OSError:
        return True  # not ours to judge (permissions): leave it
    with fh:
        if fcntl is None:
            return _pid_alive(lock)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False  # closing the file releases the lock we just took


def _pid_alive(path: str) -> bool:
    try:
        with open(path) as fh:
            pid = int(fh.read().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return pid != os.getpid()  # our own leftovers (an aborted build) are stale


def _older_than(path: str, seconds: float) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime > seconds
    except OSError:
        return False


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
