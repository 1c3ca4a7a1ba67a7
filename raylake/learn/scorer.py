"""Q-guided search: rank the beam's children by the learned Q(s, a) (GRAFT Alg. 3, lines 6–17).

:class:`raylake.search.beam.BeamSearch` calls ``scorer.rank(children, support)`` with the
children of one depth; each child is the parent prefix plus one action (a table cluster
attached by join/union, or a bridge path). The state s is the child's tables before the
action's last hop, the action a = (op, anchor, new) that hop; children are scored in one
batch and returned best-first. Intent atoms are the question's node atoms
(``support.atoms``), embedded once per question with the index's model, so the network
sees the same kind of inputs it was trained on (pseudo-intents whose atoms are lake texts).

``blend`` > 0 mixes in the IGMS beam score (both z-scored); 0 ranks by Q alone, as GRAFT.
"""
from __future__ import annotations

import json
import os

import numpy as np

from raylake.errors import RaylakeError

_KIND = {"entity": 0, "attribute": 1, "value": 2}
_EDGE = {"has_attribute": 0, "has_value": 1, "join": 2}
_OP = {"start": 0, "join": 1, "union": 2}


class QScorer:
    def __init__(self, model, meta: dict, blend: float = 0.0, threads: int | None = 1):
        self.model = model.eval()
        self.meta = meta
        self.blend = blend
        self.threads = threads
        self._feat = {}  # index build -> Featurizer
        self._atoms = {}  # id(support) -> (support, atom embeddings, kinds, edges)
        self.calls = 0

    @classmethod
    def load(cls, model_dir: str, blend: float = 0.0, threads: int | None = 1) -> "QScorer":
        """Load ``model.pt`` + ``model.json`` written by ``raylake train``."""
        import torch

        from raylake.learn.model import ModelConfig, QVNet, load_tensors

        mj, mp = os.path.join(model_dir, "model.json"), os.path.join(model_dir, "model.pt")
        if not (os.path.exists(mj) and os.path.exists(mp)):
            raise RaylakeError(f"no trained model in {model_dir!r} (model.pt + model.json): run `raylake train` first")
        with open(mj) as f:
            meta = json.load(f)
        if threads:
            torch.set_num_threads(threads)  # a few hundred small graphs: extra threads only contend
        model = QVNet(ModelConfig(**meta["model"]))
        model.load_state_dict(load_tensors(mp))
        return cls(model, meta, blend, threads)

    # ------------------------------------------------------------------ inputs

    def _featurizer(self, index):
        key = index.build
        if key not in self._feat:
            from raylake.learn.features import Featurizer
            from raylake.learn.lake_arrays import LakeArrays

            self._feat = {key: Featurizer(LakeArrays.from_index(index, pseudo_atoms=False))}
        return self._feat[key]

    def _intent(self, support):
        hit = self._atoms.get(id(support))
        if hit is not None and hit[0] is support:
            return hit[1:]
        nodes = [at for at in support.atoms if at.is_node]
        pos = {at.index: i for i, at in enumerate(nodes)}
        emb = support.index.embedder.encode([at.text.lower().replace("_", " ") for at in nodes]) if nodes else np.zeros((0, 384), np.float32)
        kinds = np.asarray([_KIND[at.kind] for at in nodes], np.int64)
        edges = np.asarray([(pos[at.ends[0]], pos[at.ends[1]]) for at in support.atoms if not at.is_node], np.int64).reshape(-1, 2)
        self._atoms = {id(support): (support, emb, kinds, edges)}  # one question at a time
        return emb, kinds, edges

    @staticmethod
    def split(child):
        """(state tables, op, anchor, new) of a child prefix: its last non-shard step is the action."""
        steps = child.steps
        k = max(i for i, s in enumerate(steps) if s.role != "union shard")
        s = steps[k]
        state = [st.new for st in steps[:k]]
        return state, _OP.get(s.op, 1), (-1 if s.anchor is None else int(s.anchor)), int(s.new)

    # ------------------------------------------------------------------ scoring

    def q_values(self, children, support) -> np.ndarray:
        import torch

        feat = self._featurizer(support.index)
        emb, kinds, edges = self._intent(support)
        parts = [self.split(c) for c in children]
        batch = feat.batch([(emb, kinds, edges)] * len(parts), [p[0] for p in parts])
        anchor, new, op = (torch.from_numpy(x) for x in feat.actions([p[1] for p in parts], [p[2] for p in parts], [p[3] for p in parts]))
        with torch.no_grad():
            q1, q2, _ = self.model(batch.to_torch(), anchor, new, op)
        self.calls += 1
        return torch.minimum(q1, q2).numpy()

    def rank(self, children, support):
        """``children`` best-first by Q (optionally blended with their IGMS beam score)."""
        if not children:
            return children
        q = self.q_values(children, support)
        key = q
        if self.blend > 0:
            sc = np.asarray([c.score for c in children], float)
            z = lambda x: (x - x.mean()) / (x.std() + 1e-9)  # noqa: E731
            key = (1 - self.blend) * z(q) + self.blend * z(sc)
        order = np.argsort(-key, kind="stable")
        return [children[i] for i in order]
