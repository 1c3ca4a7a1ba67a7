"""The learned relevance model: a fine-tuned bi-encoder, a candidate classifier and an
extension classifier, saved as one folder, and its view of one lake.

A model folder holds ``relevance.json`` (format, base model, sizes, features, the candidate and
extension classifiers' calibrations, how it was trained), ``encoder.safetensors`` (the fine-tuned top
layers, float16), ``classifier.safetensors`` and ``completion.safetensors``. Everything loads
as plain tensors and numbers: a model folder cannot run code. :class:`LakeRelevance` binds a
model to an index: the lake's table embeddings under the fine-tuned encoder are computed once
and cached beside the index (keyed by the model's fingerprint and the index build), then each
question costs one short encoder pass and a classifier call over its candidates (and, with
``extend``, up to L calls of the extension classifier over a state's pool, :mod:`.complete`).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from typing import NamedTuple

import numpy as np

from raylake.errors import RaylakeError
from raylake.relevance.classifier import CompletionClassifier
from raylake.relevance.complete import STATE_FEATURES, Calibration, Completion, choose_sequence, width
from raylake.relevance.encoder import BiEncoder
from raylake.relevance.features import FEATURES, CandidateFeatures
from raylake.relevance.select import choose
from raylake.relevance.text import table_text

FORMAT = 2  # 2: the extension classifier and its calibration (1: candidates chosen by their own probability)
_FILES = ("encoder.safetensors", "classifier.safetensors", "completion.safetensors")
PACKAGED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights")


class RelevanceModel:
    def __init__(self, encoder: BiEncoder, classifier: CompletionClassifier, completion: CompletionClassifier,
                 calibration: Calibration, meta: dict):
        self.encoder, self.classifier, self.meta = encoder, classifier, meta
        self.completion, self.calibration = completion, calibration
        # the candidate classifier's probabilities as held-out questions bore them out (identity: a model trained
        # before it existed, or on a single group of questions with no held-out half)
        self.p_calibration = Calibration()

    @classmethod
    def fresh(cls, model_path: str | None = None, max_seq_length: int = 128, train_layers: int = 2, hidden: int = 64,
              heads: int = 2, features: list[str] | None = None) -> "RelevanceModel":
        """An untrained model over ``features`` (default all of :data:`.features.FEATURES`; a loaded model
        keeps the prefix of them it was trained on)."""
        features = list(FEATURES if features is None else features)
        enc = BiEncoder(model_path, max_seq_length, train_layers, heads)
        meta = {"format": FORMAT, "max_seq_length": max_seq_length, "train_layers": train_layers, "hidden": hidden, "heads": heads,
                "features": features, "state_features": list(STATE_FEATURES),
                "base_model": os.path.basename(os.path.normpath(enc_path(model_path)))}
        return cls(enc, CompletionClassifier(len(features), hidden), CompletionClassifier(width(len(features)), hidden),
                   Calibration(), meta)

    @property
    def fingerprint(self) -> str:
        return self.meta.get("fingerprint", "untrained")

    # ------------------------------------------------------------------ persistence

    def save(self, path: str) -> None:
        """Write the folder atomically: a crash mid-write leaves any previous model at ``path`` intact."""
        from safetensors.torch import save_file

        parent = os.path.dirname(os.path.abspath(path)) or "."
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".relevance-", dir=parent)
        try:
            save_file(self.encoder.top_state(), os.path.join(tmp, "encoder.safetensors"))
            for name, net in (("classifier.safetensors", self.classifier), ("completion.safetensors", self.completion)):
                save_file({k: v.contiguous() for k, v in net.state_dict().items()}, os.path.join(tmp, name))
            self.meta["calibration"] = self.calibration.to_dict()
            self.meta["p_calibration"] = self.p_calibration.to_dict()
            digest = hashlib.sha256(json.dumps([self.meta["calibration"], self.meta["p_calibration"]]).encode())
            for name in _FILES:
                with open(os.path.join(tmp, name), "rb") as fh:
                    digest.update(fh.read())
            self.meta["fingerprint"] = digest.hexdigest()[:16]
            with open(os.path.join(tmp, "relevance.json"), "w", encoding="utf-8") as fh:
                json.dump(self.meta, fh, indent=2)
            os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide a shared model from its other users
            for name in os.listdir(tmp):
                os.chmod(os.path.join(tmp, name), 0o644)
            old = None
            if os.path.exists(path):
                old = path + f".old-{os.getpid()}"
                os.replace(path, old)
            os.replace(tmp, path)
            if old:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    @classmethod
    def load(cls, path: str, model_path: str | None = None) -> "RelevanceModel":
        from safetensors.torch import load_file

        meta_path = os.path.join(path, "relevance.json")
        if not os.path.isfile(meta_path):
            raise RaylakeError(f"{path!r} is not a relevance model folder (no relevance.json); train one with `raylake relevance train`")
        try:
            with open(meta_path, encoding="utf-8") as fh:
                meta = json.load(fh)
        except ValueError:
            raise RaylakeError(f"{meta_path!r} is not valid JSON: the model folder is damaged; train it again") from None
        if meta.get("format") != FORMAT:
            raise RaylakeError(f"relevance model {path!r} has format {meta.get('format')!r}, this raylake reads {FORMAT}; train it again")
        features = meta.get("features") or []
        # Features are only ever appended, so a model trained before some were added reads the prefix it knows.
        if features != list(FEATURES[: len(features)]) or meta.get("state_features") != list(STATE_FEATURES):
            raise RaylakeError(f"relevance model {path!r} was trained on other features; train it again with this raylake")
        model = cls.fresh(model_path, meta["max_seq_length"], meta["train_layers"], meta["hidden"], meta.get("heads", 1),
                          features)
        model.meta = meta
        try:
            model.encoder.load_top_state(load_file(os.path.join(path, "encoder.safetensors")))
            model.classifier.load_state_dict(load_file(os.path.join(path, "classifier.safetensors")))
            model.completion.load_state_dict(load_file(os.path.join(path, "completion.safetensors")))
            model.calibration = Calibration.from_dict(meta["calibration"])
            if "p_calibration" in meta:
                model.p_calibration = Calibration.from_dict(meta["p_calibration"])
        except (OSError, RuntimeError, ValueError, KeyError, TypeError) as exc:
            raise RaylakeError(f"relevance model {path!r} could not be loaded ({exc}); train it again") from None
        model.classifier.eval()
        model.completion.eval()
        return model

    def for_lake(self, index, graph=None, cache: bool = True, progress=None) -> "LakeRelevance":
        return LakeRelevance(self, index, graph or index.graph, cache, progress)


def enc_path(model_path: str | None) -> str:
    from raylake.config import resolve_model_path

    return resolve_model_path(model_path)


def table_texts(index) -> list[str]:
    return [table_text(p, c) for p, c in zip(index.paths, index.tables["text"])]


class LakeRelevance:
    """A :class:`RelevanceModel` bound to one index: scores, candidates, the chosen set."""

    def __init__(self, model: RelevanceModel, index, graph, cache: bool = True, progress=None):
        self.model, self.index, self.graph = model, index, graph
        self.table_emb = self._table_embeddings(cache, progress)
        self.features = CandidateFeatures(index, graph)
        self.completion = Completion(graph, self.features.folder, self.features.shards)
        self.n_features = len(model.meta["features"])
        self.scores("warm up")  # the first pass allocates; per-question timings should be the question's own

    def _table_embeddings(self, cache: bool, progress) -> np.ndarray:
        path = os.path.join(self.index.build, f"relevance-{self.model.fingerprint}.npy")
        if cache and os.path.isfile(path):
            emb = np.load(path)
            if emb.shape == (len(self.model.encoder.heads), self.index.n_tables, self.model.encoder.dim):
                return emb
        t = time.perf_counter()
        if progress is not None:
            progress(f"first use of this relevance model on this index: embedding its {self.index.n_tables:,} tables (cached after)")
        emb = self.model.encoder.encode(table_texts(self.index))
        if progress is not None:
            progress(f"embedded {emb.shape[1]:,} tables for the relevance model in {time.perf_counter() - t:.1f} s")
        if cache:
            try:  # the cache is an optimisation: a read-only index still answers
                tmp = path + f".tmp-{os.getpid()}.npy"
                np.save(tmp, emb)
                os.replace(tmp, path)
            except OSError:
                pass
        return emb

    def scores(self, question: str) -> np.ndarray:
        """``(T,)`` bi-encoder cosine of the question with every table, the mean over the heads."""
        q = self.model.encoder.encode([question])[:, 0]  # (heads, d)
        return np.einsum("htd,hd->t", self.table_emb, q) / len(q)

    @property
    def uses_context(self) -> bool:
        """Whether the model was trained with the extractor's and the beam's choices as features
        (then the engine runs the beam first); a model trained without them never sees them."""
        return bool(self.model.meta.get("context"))

    def rank(self, question: str, intent_tables=(), plan_tables=()) -> "Ranking":
        """The question's candidates, their features and the candidate classifier's probabilities."""
        if not self.uses_context:
            intent_tables, plan_tables = (), ()
        s = self.scores(question)
        cand = self.features.candidate_set(s, intent_tables, plan_tables)
        X = self.features.describe(question, cand, s, intent_tables, plan_tables)[:, : self.n_features]
        return Ranking(cand, self.model.p_calibration(self.model.classifier.predict(X)), X)

    def choose(self, question: str, budget: int, intent_tables=(), plan_tables=(), recall_weight: float = 1.0,
               completeness: float = 1.0, extend: bool = False) -> list[tuple[int, float]]:
        """The tables the question gets (at most ``budget``), each with its probability, in the order chosen."""
        return self.pick(self.rank(question, intent_tables, plan_tables), budget, recall_weight, completeness, extend)

    def pick(self, ranking: "Ranking", budget: int, recall_weight: float = 1.0, completeness: float = 1.0,
             extend: bool = False) -> list[tuple[int, float]]:
        """The chosen tables of a :meth:`rank` result, each with its probability, in the order chosen;
        :meth:`choose` for a caller that does not keep the whole ranking (the engine keeps it for its
        rejected tables).

        By default the candidates in the order of their own probability and the stop of highest
        expected F1 + Sufficiency over them (:func:`.select.choose`). ``extend`` decodes the greedy plan
        extension instead and stops on its calibrated picks (:mod:`.complete`); with the folder features
        in the candidate classifier it is the worse of the two on both Spider lakes
        (:data:`raylake.config.RelevanceConfig.extend`)."""
        if not extend:
            p = dict(zip(ranking.cand.tolist(), ranking.p.tolist()))
            return [(t, float(p[t])) for t in choose(ranking.cand, ranking.p, budget, recall_weight, completeness)]
        seq, q, rest = self.decode(ranking, budget)
        return choose_sequence(seq, q, rest, self.model.calibration, recall_weight, completeness)

    def decode(self, ranking: "Ranking", depth: int) -> tuple[list[int], np.ndarray, np.ndarray]:
        """The greedy plan extension of a :meth:`rank` result to ``depth`` tables, before its stop
        (:meth:`.complete.Completion.decode`: the picks, their raw probabilities, the pool left)."""
        raw = self.model.classifier.predict(ranking.features)  # the extension was trained on uncalibrated p
        return self.completion.decode(self.model.completion, ranking.cand, ranking.features, raw, depth)


class Ranking(NamedTuple):
    """One question's candidates ``(C,)``, their calibrated candidate-classifier probabilities ``(C,)`` and features ``(C, F)``."""

    cand: np.ndarray
    p: np.ndarray
    features: np.ndarray
