"""The sentence-transformers model on ONNX Runtime, int8: the fast embedding path (``embed_backend="onnx-int8"``).

The same local model folder the torch path loads (by default the packaged MiniLM; nothing is
downloaded) is exported once with ``torch.onnx.export`` and quantised with ONNX Runtime's
dynamic quantisation (Jacob et al., 2018: int8 weights, activations quantised per batch at
run time), then cached under ``$RAYLAKE_CACHE`` (default ``~/.cache/raylake``), keyed by the
model folder, its weights' size and time, and the library versions. Embedding is the
transformer's last hidden state pooled as the model's ``1_Pooling`` says (mean or CLS) and
L2-normalised as the torch path does, so the two differ only by quantisation.

Choices, measured on the Spider lake's texts (the variants: ``docs/benchmarks.md``; the kept
model: ``python -m bench.embed_bench``): the ``MatMul`` weights are quantised per output channel
(one scale per tensor: mean cosine to torch 0.954; per channel: 0.990), the word-embedding
``Gather`` is not (a lookup: nothing to speed up). Activations are quantised with one scale per
call, so a text's vector depends a little on the texts batched with it (cosine 0.988 on average
between batch 1 and batch 64, about the quantisation error itself); one text per call would
remove that and most of the gain (1.27× against 1.73×). On the 2-core AVX2 machine (no VNNI)
this repository is measured on, the int8 model is ~1.6× faster than torch; fp32 ONNX Runtime
alone is not faster at all.
"""
from __future__ import annotations

import json
import os
import threading

import numpy as np

from raylake.errors import RaylakeError

_EXPORT_LOCK = threading.Lock()
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def require_onnxruntime() -> None:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        raise RaylakeError("embed_backend 'onnx-int8' needs ONNX Runtime: pip install 'raylake[fast]' "
                           "(or set [index] embed_backend = \"torch\")") from None


def _modules(model_path: str) -> tuple[str, str]:
    """(the Transformer module's folder, the pooling mode) of a sentence-transformers folder."""
    transformer, pooling = model_path, "mean"
    mods = os.path.join(model_path, "modules.json")
    if os.path.exists(mods):
        with open(mods) as f:
            for m in json.load(f):
                if m.get("type", "").endswith("models.Transformer"):
                    transformer = os.path.join(model_path, m.get("path", ""))
                elif m.get("type", "").endswith("models.Pooling"):
                    with open(os.path.join(model_path, m["path"], "config.json")) as f2:
                        cfg = json.load(f2)
                    modes = [k for k, v in cfg.items() if k.startswith("pooling_mode") and v]
                    if modes == ["pooling_mode_mean_tokens"]:
                        pooling = "mean"
                    elif modes == ["pooling_mode_cls_token"]:
                        pooling = "cls"
                    else:
                        raise RaylakeError(f"embed_backend 'onnx-int8' supports mean or CLS pooling; {model_path!r} pools by "
                                           f"{', '.join(modes) or 'nothing'}: use embed_backend 'torch'")
    return transformer, pooling


def cache_dir() -> str:
    return os.environ.get("RAYLAKE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "raylake")


def _cache_key(transformer: str) -> str:
    import hashlib

    import onnxruntime
    import torch

    h = hashlib.sha256(os.path.abspath(transformer).encode())
    for name in sorted(os.listdir(transformer)):
        p = os.path.join(transformer, name)
        if os.path.isfile(p):
            st = os.stat(p)
            h.update(f"{name}:{st.st_size}:{int(st.st_mtime)}".encode())
    h.update(f"ort {onnxruntime.__version__} torch {torch.__version__}".encode())
    return h.hexdigest()[:16]


def export(model_path: str, out_file: str) -> None:
    """Export the model's transformer to ONNX and quantise its MatMul weights to int8 (per channel) into ``out_file``."""
    import tempfile
    import warnings

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    transformer, _ = _modules(model_path)
    tok = AutoTokenizer.from_pretrained(transformer)
    model = AutoModel.from_pretrained(transformer).eval()
    sample = tok(["a short text", "a somewhat longer text to trace"], padding=True, return_tensors="pt")
    names = [k for k in _INPUTS if k in sample]

    class LastHidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *xs):
            return self.m(**dict(zip(names, xs))).last_hidden_state

    os.makedirs(os.path.dirname(out_file), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(out_file)) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow on shapes: the axes are declared dynamic
        fp32 = os.path.join(tmp, "model.onnx")
        torch.onnx.export(LastHidden(model), tuple(sample[k] for k in names), fp32, input_names=names,
                          output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                          dynamic_axes={k: {0: "batch", 1: "tokens"} for k in [*names, "last_hidden_state"]})
        part = os.path.join(tmp, "model_int8.onnx")
        quantize_dynamic(fp32, part, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"])
        os.replace(part, out_file)  # atomic: a crash leaves no half-written model for the next load


class OnnxEncoder:
    """Encode texts with the int8 ONNX export of a sentence-transformers model (exported on first use, then cached)."""

    def __init__(self, model_path: str, max_seq_length: int = 64, threads: int | None = None):
        require_onnxruntime()
        import onnxruntime as ort
        from transformers import AutoTokenizer

        transformer, self.pooling = _modules(model_path)
        path = os.path.join(cache_dir(), "onnx", _cache_key(transformer), "model_int8.onnx")
        with _EXPORT_LOCK:
            if not os.path.exists(path):
                export(model_path, path)
        self.path = path
        self.max_seq_length = max_seq_length
        self.tokenizer = AutoTokenizer.from_pretrained(transformer)
        so = ort.SessionOptions()
        if threads is None:
            import torch

            threads = torch.get_num_threads()  # the torch path's parallelism, so the two compare like for like
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """``(len(texts), dim)`` float32, L2-normalised; texts are batched by length so batches pad little."""
        out = np.zeros((len(texts), self.dim), np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        for lo in range(0, len(texts), batch_size):
            ids = order[lo:lo + batch_size]
            enc = self.tokenizer([texts[i] for i in ids], padding=True, truncation=True, max_length=self.max_seq_length,
                                 return_tensors="np")
            hidden = self.session.run(None, {k: enc[k].astype(np.int64) for k in self.inputs})[0]
            if self.pooling == "cls":
                v = hidden[:, 0]
            else:
                m = enc["attention_mask"][..., None].astype(np.float32)
                v = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
            out[ids] = v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)
        return out
