"""The int8 ONNX embedding path: agreement with the torch reference, its cache, its errors, an index built with it."""
import json
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from raylake.config import IndexConfig, resolve_model_path  # noqa: E402
from raylake.errors import RaylakeError  # noqa: E402
from raylake.index import store  # noqa: E402
from raylake.index.build import build_index  # noqa: E402
from raylake.index.embed import Embedder  # noqa: E402
from raylake.index.onnx_embed import OnnxEncoder  # noqa: E402
from raylake.index.reader import LakeIndex  # noqa: E402


def _texts(index_dir):
    idx = LakeIndex(index_dir)
    cols = idx.columns
    return list(dict.fromkeys(cols["header_text"] + cols["sample_text"] + idx.tables["text"]))


def test_onnx_vectors_agree_with_torch(example_index):
    texts = _texts(example_index)
    assert len(texts) > 100
    ref = Embedder(backend="torch").encode_uncached(texts)
    fast = Embedder(backend="onnx-int8").encode_uncached(texts)
    assert fast.shape == ref.shape and fast.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    cos = (fast * ref).sum(1)
    assert cos.mean() >= 0.99 and cos.min() >= 0.95, (cos.mean(), cos.min())
    # quantisation, not a different model: each text's nearest torch vector is its own for nearly all texts
    assert (np.argmax(fast @ ref.T, axis=1) == np.arange(len(texts))).mean() >= 0.98
    # activations are quantised per call, so a text's vector moves a little with its batch: no more than quantisation does
    one = Embedder(backend="onnx-int8", batch_size=1).encode_uncached(texts[:50])
    moved = (one * fast[:50]).sum(1)
    assert moved.mean() >= 0.98 and moved.min() >= 0.95, (moved.mean(), moved.min())


def test_export_is_cached_and_reused():
    first = OnnxEncoder(resolve_model_path())
    mtime = os.stat(first.path).st_mtime_ns
    again = OnnxEncoder(resolve_model_path())
    assert again.path == first.path and os.stat(again.path).st_mtime_ns == mtime  # read, not exported again
    assert os.listdir(os.path.dirname(first.path)) == ["model_int8.onnx"]  # no export leftovers


def test_unsupported_pooling_is_one_line_error(tmp_path):
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_max_tokens": True}))
    with pytest.raises(RaylakeError, match="embed_backend 'torch'"):
        OnnxEncoder(str(tmp_path))


def test_unknown_backend_is_refused():
    with pytest.raises(RaylakeError, match="onnx-int8"):
        Embedder(backend="tensorrt")


def test_index_built_with_onnx_keeps_its_backend(ray_session, example_lake, example_index, tmp_path):
    cfg = IndexConfig(embed_backend="onnx-int8")
    index_dir = str(tmp_path / "onnx_index")
    build_index(example_lake, index_dir, cfg=cfg, progress=False)
    fast, ref = LakeIndex(index_dir), LakeIndex(example_index)
    assert fast.manifest["params"]["embed_backend"] == "onnx-int8"
    assert fast.embedder.backend == "onnx-int8"  # questions are embedded as the lake was
    assert fast.paths == ref.paths
    cos = (fast.emb_table * ref.emb_table).sum(1)
    assert cos.mean() >= 0.99
    # the same join edges, scored alike: the faster vectors do not change the lake graph's shape
    key = lambda e: (e["kind"], e["src_table"], e["src_column"], e["dst_table"], e["dst_column"])  # noqa: E731
    a, b = {key(e) for e in fast.edges}, {key(e) for e in ref.edges}
    assert len(a & b) >= 0.9 * len(a | b)
    # switching back re-embeds everything
    s = build_index(example_lake, index_dir, cfg=IndexConfig(), progress=False)
    assert not s["up_to_date"] and s["changed"] == s["tables"]


def test_index_from_before_the_backend_setting_reads_as_torch(example_lake, example_index, tmp_path, monkeypatch):
    import raylake.index.build as build_mod

    lake, index_dir = str(tmp_path / "lake"), str(tmp_path / "index")
    shutil.copytree(example_lake, lake)
    shutil.copytree(example_index, index_dir)
    build, manifest = store.read_manifest(index_dir)
    del manifest["params"]["embed_backend"]
    with open(os.path.join(build, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    monkeypatch.setattr(build_mod, "start_ray", lambda *a, **k: pytest.fail("an old torch index must stay up to date"))
    assert build_index(lake, index_dir, progress=False)["up_to_date"]
    assert LakeIndex(index_dir).embedder.backend == "torch"
