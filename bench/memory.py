"""Peak memory of a process and all its descendants (a driver plus the Ray workers it starts).

Sampled with psutil from a background thread. Two totals are kept, because they answer
different questions:

- **RSS**: what ``top`` shows, summed; it counts shared pages (torch's libraries in every
  worker, Ray's object store) once per process, so it overstates the machine's real use.
- **PSS** (proportional set size): each shared page split among the processes mapping it; the
  sum is the memory the whole tree really occupies. The headline figure.
"""
from __future__ import annotations

import threading
import time

import psutil


class TreeMemory:
    """``with TreeMemory(pid) as m: ...``; then ``m.peak_rss_mb``, ``m.peak_pss_mb``, ``m.peak_procs``.

    With ``limit_mb``, the tree is killed once its PSS passes the limit (``m.killed_at_mb``):
    on a shared machine a run that outgrows it must not wake the kernel's OOM killer, which
    may pick someone else's process.
    """

    def __init__(self, pid: int, interval_s: float = 0.25, limit_mb: float | None = None):
        self.root = psutil.Process(pid)
        self.interval_s = interval_s
        self.limit_mb = limit_mb
        self.killed_at_mb: float | None = None
        self.peak_rss_mb = self.peak_pss_mb = self.peak_driver_rss_mb = 0.0
        self.peak_procs = 0
        self.seen: dict[int, psutil.Process] = {}  # every process of the tree, to reap it afterwards
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval_s)

    def sample(self) -> None:
        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        rss = pss = 0
        for p in procs:
            self.seen.setdefault(p.pid, p)
            try:
                info = p.memory_full_info()
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            rss += info.rss
            pss += getattr(info, "pss", info.rss)
            if p.pid == self.root.pid:
                self.peak_driver_rss_mb = max(self.peak_driver_rss_mb, info.rss / 2**20)
        self.peak_rss_mb = max(self.peak_rss_mb, rss / 2**20)
        self.peak_pss_mb = max(self.peak_pss_mb, pss / 2**20)
        self.peak_procs = max(self.peak_procs, len(procs))
        if self.limit_mb and pss / 2**20 > self.limit_mb and self.killed_at_mb is None:
            self.killed_at_mb = pss / 2**20
            for p in procs:
                try:
                    p.kill()
                except psutil.NoSuchProcess:
                    pass

    def reap(self, timeout_s: float = 30.0) -> int:
        """Wait for the tree's processes to exit, kill those that do not; returns how many were killed."""
        procs = [p for p in self.seen.values() if p.pid != self.root.pid]
        _, alive = psutil.wait_procs(procs, timeout=timeout_s)
        for p in alive:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        return len(alive)


def machine() -> dict:
    """The machine a benchmark ran on."""
    vm = psutil.virtual_memory()
    return {"cpus": psutil.cpu_count(), "memory_gb": round(vm.total / 2**30, 1), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
