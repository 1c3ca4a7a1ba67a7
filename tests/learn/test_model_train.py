"""Value network, IQL and Ray Train: shapes, a loss that falls, checkpoints QScorer loads and search uses."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from raylake.learn.features import Featurizer
from raylake.learn.iql import IQL, IQLConfig, expectile_loss
from raylake.errors import RaylakeError
from raylake.learn.model import ModelConfig, QVNet, load_tensors
from raylake.learn.train import _to_tensors
from raylake.learn.trajectories import TrajectoryConfig, generate_batch, seed_bins

SMALL = ModelConfig(hidden=32, table_dim=32, head_hidden=64, heads=2)


@pytest.fixture(scope="module")
def rows(fig4):
    torch.set_num_threads(1)
    table = generate_batch(fig4, TrajectoryConfig(seed=2), 0, 0, 120, seed_bins(fig4, fig4.part, 0, 3))["table"]
    return {k: np.asarray(v, dtype=object) if isinstance(v[0], list) else np.asarray(v) for k, v in table.to_pydict().items()}


def test_batch_and_forward_shapes(fig4, rows):
    feat = Featurizer(fig4)
    part = {k: v[:16] for k, v in rows.items()}
    g, g_next, anchor, new, op, reward, done = _to_tensors(feat, part)
    assert g["x"]["atom"].shape[1] == fig4.dim + 3
    assert g["n_graphs"] == 16 and g_next["n_graphs"] == 16
    # next states hold one more table each
    assert (g_next["n_tables"] - g["n_tables"]).eq(1).all()
    model = QVNet(ModelConfig(in_dim=fig4.dim, **{k: v for k, v in SMALL.to_dict().items() if k != "in_dim"}))
    q1, q2, v = model(g, anchor, new, op)
    assert q1.shape == q2.shape == v.shape == (16,)
    assert torch.isfinite(q1).all() and torch.isfinite(v).all()
    # a batch of only empty prefixes (search's first depth) works too
    empty = {k: v[rows["t"] == 0][:4] for k, v in rows.items()}
    g0, *_ = _to_tensors(feat, empty)
    assert g0["x"]["table"].shape[0] == 0
    assert model.value(g0).shape == (4,)


def test_expectile_loss_is_asymmetric():
    u = torch.tensor([1.0, -1.0])
    assert expectile_loss(u[:1], 0.7) == pytest.approx(0.7)
    assert expectile_loss(u[1:], 0.7) == pytest.approx(0.3)


def test_iql_updates_reduce_the_q_loss(fig4, rows):
    torch.manual_seed(0)
    feat = Featurizer(fig4)
    cfg = IQLConfig(total_steps=60, batch_size=64, lr=1e-3)
    model = QVNet(ModelConfig(in_dim=fig4.dim, **{k: v for k, v in SMALL.to_dict().items() if k != "in_dim"}))
    learner = IQL(model, cfg)
    rng = np.random.default_rng(0)
    n = len(rows["t"])
    losses = []
    for _ in range(60):
        idx = rng.choice(n, cfg.batch_size, replace=False)
        losses.append(learner.update(*_to_tensors(feat, {k: v[idx] for k, v in rows.items()}))["loss_q"])
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    assert learner.step == 60


def test_ray_train_checkpoint_resume_and_q_guided_search(ray_session, fig4, example_index, tmp_path):
    from raylake.learn.scorer import QScorer
    from raylake.learn.train import TrainConfig, train
    from raylake.learn.trajectories import generate
    from raylake.search import Engine

    traj = tmp_path / "traj"
    generate(None, str(traj), TrajectoryConfig(n_trajectories=200, batch=100, seed=5), arrays=fig4, progress=False)
    model_dir = tmp_path / "model"
    cfg = TrainConfig(steps=4, workers=2, eval_every=2, eval_rows=64, shuffle_buffer=256,
                      model=ModelConfig(in_dim=fig4.dim, **{k: v for k, v in SMALL.to_dict().items() if k != "in_dim"}))
    cfg.iql.batch_size = 16
    s = train(str(traj), str(model_dir), cfg)
    assert (model_dir / "model.pt").exists() and (model_dir / "model.json").exists()
    metrics = [json.loads(l) for l in open(model_dir / "metrics.jsonl")]
    assert [m["step"] for m in metrics] == [2, 4]
    assert all(np.isfinite(m["val_mape_q"]) and m["val_n"] > 0 for m in metrics)
    assert s["metrics"]["step"] == 4
    # resume: continues from step 4 to step 6
    cfg.steps, cfg.resume = 6, True
    s2 = train(str(traj), str(model_dir), cfg)
    assert s2["resumed_from"] is not None
    assert json.load(open(model_dir / "model.json"))["step"] == 6
    # the exported model ranks the beam of a real search
    scorer = QScorer.load(str(model_dir))
    answer = Engine(example_index, scorer=scorer).ask("average points of players from the club named AIB", budget=4)
    assert scorer.calls > 0
    assert answer.paths
    assert os.path.basename(answer.paths[0])


def test_learner_state_round_trips_as_plain_tensors(fig4, rows, tmp_path):
    feat = Featurizer(fig4)
    mcfg = ModelConfig(in_dim=fig4.dim, **{k: v for k, v in SMALL.to_dict().items() if k != "in_dim"})
    learner = IQL(QVNet(mcfg), IQLConfig(total_steps=10, batch_size=16))
    for lo in (0, 16):
        learner.update(*_to_tensors(feat, {k: v[lo:lo + 16] for k, v in rows.items()}))
    torch.save(learner.state_dict(), tmp_path / "state.pt")
    again = IQL(QVNet(mcfg), IQLConfig(total_steps=10, batch_size=16))
    again.load_state_dict(load_tensors(str(tmp_path / "state.pt")))  # optimizer and schedule state included
    assert again.step == 2 and again.sched.last_epoch == learner.sched.last_epoch
    assert all(torch.equal(a, b) for a, b in zip(again.core.state_dict().values(), learner.core.state_dict().values()))


class _Payload:
    """Unpickling this creates ``path``: proof that a load ran code from the file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickled_object_in_a_checkpoint_or_model_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from raylake.learn.scorer import QScorer

    marker = tmp_path / "code_ran"
    (tmp_path / "traj" / "shards").mkdir(parents=True)
    pq.write_table(pa.table({"traj": [0]}), tmp_path / "traj" / "shards" / "part-0.parquet")
    ckpt = tmp_path / "model" / "ray" / "train" / "checkpoint_000001"
    ckpt.mkdir(parents=True)
    torch.save({"model": {}, "step": 1, "extra": _Payload(str(marker))}, ckpt / "state.pt")
    (ckpt / "model.json").write_text(json.dumps({"step": 1}))
    r = subprocess.run([sys.executable, "-m", "raylake.cli", "train", str(tmp_path / "traj"), "--model-dir", str(tmp_path / "model"),
                        "--resume"], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    assert r.stderr.startswith("raylake: error: refusing to load") and "state.pt" in r.stderr
    # an exported model is held to the same rule
    model_dir = tmp_path / "exported"
    model_dir.mkdir()
    torch.save({"w": torch.zeros(2), "extra": _Payload(str(marker))}, model_dir / "model.pt")
    (model_dir / "model.json").write_text(json.dumps({"model": SMALL.to_dict(), "step": 1}))
    with pytest.raises(RaylakeError, match="refusing to load"):
        QScorer.load(str(model_dir))
    assert not marker.exists()
