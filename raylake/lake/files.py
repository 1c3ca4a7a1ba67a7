"""List the files of a lake: a local folder, a glob, or any URI pyarrow.fs understands.

Paths inside the index are always relative to the lake root, in POSIX form, so an index
can be moved with its lake and compared across machines.

A local lake is walked without trusting its symbolic links: a link is followed only when
its resolved target stays inside the lake's real root, and each real file or folder is
visited once (so ``ln -s . loop`` adds nothing). Links that lead out, links to something
already listed, broken links, FIFOs, sockets and devices are *refused*: they are named in
``Lake.refused`` with a reason and never opened (a FIFO would block a reader forever).
"""
from __future__ import annotations

import errno
import fnmatch
import os
import posixpath
import stat
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from raylake.errors import LakeError

TABLE_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz", ".parquet", ".pq")
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class LakeFile:
    path: str  # relative to the lake root, POSIX separators
    location: str  # path inside ``Lake.fs`` (for a local lake: the file's real path)
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
    refused: dict[str, str] = field(default_factory=dict)  # path -> why it is not read (links, FIFOs)
    real_base: str | None = None  # a local lake's root with every link resolved: nothing is read outside it

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def read_bytes(self, f: LakeFile) -> bytes:
        if self.real_base is not None:
            return _read_local(f.location, self.real_base)
        # compression=None: the raw bytes (their hash is the file's); read_table gunzips .gz itself
        with self.fs.open_input_stream(f.location, compression=None) as stream:
            return stream.read()


def _split_glob(path: str) -> tuple[str, str | None]:
    parts = path.split("/")
    for i, part in enumerate(parts):
        if _GLOB_CHARS & set(part):
            return "/".join(parts[:i]) or ("/" if path.startswith("/") else "."), "/".join(parts[i:])
    return path, None


def _inside(real: str, real_base: str) -> bool:
    return real == real_base or real.startswith(real_base.rstrip(os.sep) + os.sep)


def _read_local(location: str, real_base: str) -> bytes:
    """The bytes of a regular file inside ``real_base``, checked at open time: a file swapped
    for a link out of the lake, or for a FIFO, after the listing is refused, not read."""
    if not _inside(os.path.realpath(location), real_base):
        raise OSError(errno.EACCES, "resolves outside the lake", location)
    fd = os.open(location, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", location)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _walk_local(base: str) -> tuple[list[LakeFile], dict[str, str]]:
    """Regular files under ``base`` (hidden entries left out) and the refused entries.

    Real folders are walked first, links afterwards: so a file reachable both by its own name
    and through a link is listed under its own name, whatever the sort order."""
    real_base = os.path.realpath(base)
    files: list[LakeFile] = []
    refused: dict[str, str] = {}
    seen_dirs: set[str] = {real_base}
    seen_files: dict[str, str] = {}  # real path -> the lake path it is listed under
    links: list[tuple[str, str]] = []  # (lake path, absolute path of the link)

    def rel_of(real: str) -> str:
        return os.path.relpath(real, real_base).replace(os.sep, "/")

    def walk(folder: str, rel_folder: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            refused[rel_folder or "."] = f"unreadable folder: {exc.strerror or type(exc).__name__}"
            return
        for e in entries:
            if e.name.startswith("."):
                continue  # hidden files and folders (.raylake, .git, .DS_Store) are not lake tables
            rel = f"{rel_folder}/{e.name}" if rel_folder else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as exc:
                refused[rel] = f"unreadable: {exc.strerror or type(exc).__name__}"
                continue
            if stat.S_ISLNK(st.st_mode):
                links.append((rel, e.path))
            elif stat.S_ISDIR(st.st_mode):
                seen_dirs.add(os.path.realpath(e.path))
                walk(e.path, rel)
            elif stat.S_ISREG(st.st_mode):
                seen_files[os.path.realpath(e.path)] = rel
                files.append(LakeFile(rel, e.path, int(st.st_size), int(st.st_mtime_ns)))
            else:
                refused[rel] = f"{_kind(st.st_mode)}, not a file: not read"

    walk(base, "")
    i = 0
    while i < len(links):  # links found while walking a linked folder join the queue
        rel, path = links[i]
        i += 1
        try:
            real = os.path.realpath(path, strict=True)
            st = os.stat(real)
        except OSError as exc:
            loop = exc.errno == errno.ELOOP
            refused[rel] = "symbolic link loop: not followed" if loop else "broken symbolic link: its target does not exist"
            continue
        if not _inside(real, real_base):
            refused[rel] = "symbolic link to a target outside the lake: not followed"
            continue
        target = rel_of(real)
        if target != "." and any(part.startswith(".") for part in target.split("/")):
            refused[rel] = "symbolic link into a hidden folder of the lake: not followed"
        elif stat.S_ISDIR(st.st_mode):
            if real in seen_dirs:
                refused[rel] = f"symbolic link to the folder {target!r}, already listed: not followed again"
            else:
                seen_dirs.add(real)
                walk(real, rel)
        elif stat.S_ISREG(st.st_mode):
            if real in seen_files:
                refused[rel] = f"symbolic link to {seen_files[real]!r}, already listed: read once, under that name"
            else:
                seen_files[real] = rel
                files.append(LakeFile(rel, real, int(st.st_size), int(st.st_mtime_ns)))
        else:
            refused[rel] = f"symbolic link to {_kind(st.st_mode)}: not read"
    return files, refused


def safe_relpath(relpath: str) -> str:
    """``relpath`` normalised, or :class:`LakeError` when it would leave the lake root
    (absolute, ``..``, empty): table paths come from an index folder, which may have been
    edited, and a plan naming ``../secrets.csv`` must not read it."""
    p = str(relpath).replace("\\", "/")
    norm = posixpath.normpath(p) if p else ""
    if not p or p.startswith("/") or norm in (".", "") or norm == ".." or norm.startswith("../") or "\x00" in p:
        raise LakeError(f"table path {relpath!r} is not a path inside the lake: refused (rebuild the index with `raylake index`)")
    return norm


def lake_location(lake_root: str, relpath: str) -> str:
    """Where the lake file ``relpath`` lies (a URI, or a local path under ``lake_root``), for
    readers other than :func:`read_lake_file` (DuckDB in ``Fused.sql``); never outside the lake."""
    rel = safe_relpath(relpath)
    if "://" in lake_root:
        return f"{_split_glob(lake_root)[0].rstrip('/')}/{rel}"
    return os.path.join(lake_root, *rel.split("/"))


def read_lake_file(lake_root: str, relpath: str) -> bytes:
    """The bytes of the lake file ``relpath`` (relative to ``lake_root``), never one outside it."""
    rel = safe_relpath(relpath)
    if "://" in lake_root:
        base_uri, _ = _split_glob(lake_root)
        fs, base = pafs.FileSystem.from_uri(base_uri)
        with fs.open_input_stream(f"{base.rstrip('/')}/{rel}", compression=None) as stream:
            return stream.read()
    return _read_local(os.path.join(lake_root, *rel.split("/")), os.path.realpath(lake_root))


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
    if isinstance(fs, pafs.LocalFileSystem):
        listed, refused = _walk_local(base)
        real_base = os.path.realpath(base)
    else:
        listed, refused, real_base = _list_remote(fs, base, path), {}, None
    files = [f for f in listed if pattern is None or fnmatch.fnmatch(f.path, pattern)]
    refused = {p: r for p, r in refused.items() if pattern is None or fnmatch.fnmatch(p, pattern)}
    files.sort(key=lambda f: f.path)
    if not files and not refused:
        what = f"matches {path!r}" if pattern else f"is in {path!r}"
        raise LakeError(f"the lake is empty: no file {what}")
    return Lake(root=root, fs=fs, base=base, files=files, refused=dict(sorted(refused.items())), real_base=real_base)


def _list_remote(fs: pafs.FileSystem, base: str, path: str) -> list[LakeFile]:
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
        files.append(LakeFile(rel, fi.path, int(fi.size or 0), int(fi.mtime_ns or 0)))
    return files
