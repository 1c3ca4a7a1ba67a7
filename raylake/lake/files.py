"""List the files of a lake: a local folder, a glob, or any URI pyarrow.fs understands.

Paths inside the index are always relative to the lake root, in POSIX form, so an index
can be moved with its lake and compared across machines.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

import pyarrow.fs as pafs

from raylake.errors import LakeError

TABLE_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz", ".parquet", ".pq")
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class LakeFile:
    path: str  # relative to the lake root, POSIX separators
    location: str  # path inside ``Lake.fs``
    size: int
    mtime_ns: int

    @property
    def fingerprint(self) -> str:
        """Cheap change detector; a content hash settles ties (see ``index.build``)."""
        return f"{self.size}:{self.mtime_ns}"


@dataclass
class Lake:
    root: str  # what the user named, normalised (absolute for local paths)
    fs: pafs.FileSystem
    base: str  # root inside ``fs``
    files: list[LakeFile]

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def read_bytes(self, f: LakeFile) -> bytes:
        # compression=None: the raw bytes (their hash is the file's); read_table gunzips .gz itself
        with self.fs.open_input_stream(f.location, compression=None) as stream:
            return stream.read()


def _split_glob(path: str) -> tuple[str, str | None]:
    parts = path.split("/")
    for i, part in enumerate(parts):
        if _GLOB_CHARS & set(part):
            return "/".join(parts[:i]) or ("/" if path.startswith("/") else "."), "/".join(parts[i:])
    return path, None


def open_lake(path: str) -> Lake:
    """Resolve ``path`` (folder, glob or URI) to a :class:`Lake` with its file listing.

    Raises :class:`LakeError` when the path does not exist or holds no files.
    """
    if not path or not str(path).strip():
        raise LakeError("no lake path given: pass a folder, a glob such as 'lake/*.csv', or a URI")
    path = str(path)
    if "://" in path:
        base_uri, pattern = _split_glob(path)
        try:
            fs, base = pafs.FileSystem.from_uri(base_uri)
        except Exception as exc:  # pyarrow raises several types for unknown schemes and bad URIs
            raise LakeError(f"cannot open lake URI {path!r}: {exc}") from None
        root = path
    else:
        fs = pafs.LocalFileSystem()
        local = os.path.abspath(os.path.expanduser(path))
        base, pattern = _split_glob(local)
        root = local if pattern is None else base
        if pattern is None and os.path.isfile(local):
            base, pattern = os.path.dirname(local), os.path.basename(local)
    try:
        info = fs.get_file_info(base)
    except Exception as exc:
        raise LakeError(f"cannot read lake {path!r}: {exc}") from None
    if info.type == pafs.FileType.NotFound:
        raise LakeError(f"lake path {path!r} does not exist")
    if info.type != pafs.FileType.Directory:
        raise LakeError(f"lake path {path!r} is not a folder, glob or URI of a folder")
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    except Exception as exc:
        raise LakeError(f"cannot list lake {path!r}: {exc}") from None
    files = []
    for fi in infos:
        if fi.type != pafs.FileType.File:
            continue
        rel = os.path.relpath(fi.path, base).replace(os.sep, "/")
        if any(part.startswith(".") for part in rel.split("/")):
            continue  # hidden files and folders (.raylake, .git, .DS_Store) are not lake tables
        if pattern is not None and not fnmatch.fnmatch(rel, pattern):
            continue
        files.append(LakeFile(rel, fi.path, int(fi.size or 0), int(fi.mtime_ns or 0)))
    files.sort(key=lambda f: f.path)
    if not files:
        what = f"matches {path!r}" if pattern else f"is in {path!r}"
        raise LakeError(f"the lake is empty: no file {what}")
    return Lake(root=root, fs=fs, base=base, files=files)
