"""Fine-tuning the relevance encoder (raylake/relevance/fit.py): early stopping and recall@k."""
from __future__ import annotations

import numpy as np
import pytest

from raylake.relevance.fit import Example, fit_encoder, top_k_shares

TABLES = {
    "club": "club id, club name, founded | 1, AIB, 1884",
    "player": "player id, player name, club id, points | 7, Ann, 1, 12.5",
    "hospital": "hospital, city, beds | St Mary, Boston, 120",
    "flight": "flight no, origin, destination | BA12, Boston, London",
}
EXAMPLES = [
    Example("How many players does each club have?", [TABLES["player"], TABLES["club"]]),
    Example("Which hospitals have more than 100 beds?", [TABLES["hospital"]]),
    Example("List the flights departing from Boston.", [TABLES["flight"]]),
    Example("Which clubs were founded before 1900?", [TABLES["club"]]),
]


@pytest.fixture(scope="module")
def encoder():
    from raylake.relevance.encoder import BiEncoder

    return BiEncoder(None, 64, train_layers=1, heads=1)


def _state(encoder):
    return [v.detach().clone() for layer in encoder.heads[0] for v in layer.state_dict().values()]


def test_top_k_shares_count_the_share_of_needed_tables_in_the_top_k():
    tables = np.eye(4, dtype=np.float32)
    questions = np.array([[1, 0.5, 0, 0], [0, 0, 0, 1]], np.float32)
    assert top_k_shares(tables, questions, [[0, 1], [2]], k=2).mean() == pytest.approx(0.5)  # 2/2, then 0/1
    assert top_k_shares(tables, questions, [[0, 1], [3]], k=2).mean() == pytest.approx(1.0)


def test_early_stopping_keeps_the_best_epoch_and_stops_after_patience(encoder):
    snapshots, calls = [], []

    def validate(head):
        calls.append(head)
        snapshots.append(_state(encoder))
        return [0.2, 0.9, 0.5, 0.4, 0.3, 0.1][len(calls) - 1]  # best after epoch 2, then worse

    fit = fit_encoder(encoder, EXAMPLES, epochs=6, batch_size=2, lr=1e-3, validate=validate, patience=2)
    assert fit.val == [0.2, 0.9, 0.5, 0.4]  # stopped two epochs after the best, not at the cap of 6
    assert fit.epochs == 2 and len(fit.losses) == 4 * 3  # 5 pairs in batches of 2: 3 steps an epoch
    kept = _state(encoder)
    assert all(np.array_equal(a, b) for a, b in zip(kept, snapshots[1]))  # the best epoch's weights are restored
    assert not all(np.array_equal(a, b) for a, b in zip(kept, snapshots[3]))
    # the head is left in evaluation mode with its weights frozen
    assert not any(p.requires_grad for layer in encoder.heads[0] for p in layer.parameters())


def test_without_validation_every_epoch_runs(encoder):
    fit = fit_encoder(encoder, EXAMPLES, epochs=2, batch_size=4, lr=1e-4)
    assert fit.val == [] and fit.epochs == 2 and len(fit.losses) == 2 * 2
