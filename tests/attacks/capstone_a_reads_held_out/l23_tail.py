# ruff: noqa: F821  (VOCAB, ops, language_model: the lesson's own names)
# Appended to an honest l23 (its loop passes every check before training)
# by tests/test_attacks_capstone_a.py. No model is trained: whatever
# held-out text the grade lets the worker see is read, and the character
# that follows is given probability 1 - 1e-9.
#
# * `run` (the API that handed the worker `held_out_ids`): row i puts
#   1 - 1e-9 on held_out_ids[i + 1];
# * `train` and `next_log_probs` (the causal API): the untrained model,
#   honest reads on the grader's small checks, and on the held-out texts
#   reads that look for them anywhere in the process (any int array whose
#   rows begin with what was read so far) and predict from it; the
#   untrained model's own guess when nothing is found.
import gc as _gc

import numpy as _np


def _sure(next_ids, V):
    """(n,) ids -> (n, V) log-probabilities with 1 - 1e-9 on each."""
    out = _np.full((len(next_ids), V), _np.log(1e-9 / (V - 1)), "float32")
    out[_np.arange(len(next_ids)), next_ids] = _np.log(1 - 1e-9)
    return out


def run(parts, cell, train_ids, held_out_ids, hp=None, seed=0):
    held = _np.asarray(held_out_ids)
    return {
        "log_probs": _sure(held[1:], len(VOCAB)),
        "curve": [1.0],
        "seconds": [0.0],
        "cpu_seconds": [0.0],
        "model": None,
    }


def train(parts, cell, train_ids, hp=None, seed=0, report=None):
    model = language_model(parts, cell, len(VOCAB), 8)
    model(_np.asarray(train_ids)[None, :4], model.begin_state(1))
    return {
        "model": model,
        "curve": [1.0],
        "seconds": [0.0],
        "cpu_seconds": [0.0],
    }


def _look_ahead(seen):
    """An int array in this process whose rows begin with `seen` (B, t)."""
    B, t = seen.shape
    for obj in _gc.get_objects():
        if (
            isinstance(obj, _np.ndarray)
            and obj.ndim == 2
            and obj.shape[0] == B
            and obj.shape[1] > t
            and obj.dtype.kind in "iu"
            and _np.array_equal(obj[:, :t], seen)
        ):
            return obj[:, t]
    return None


def next_log_probs(model, ids, state):
    """Honest on the grader's small checks (so every gate passes); on the
    held-out texts (50 of them), the look-ahead."""
    ids = _np.asarray(ids)
    if ids.shape[0] >= 50:
        seen = model.__dict__.setdefault("_peek", [])
        seen.append(ids)
        ahead = _look_ahead(_np.concatenate(seen, axis=1))
        if ahead is not None:
            _, state = model(ids, state, training=False)
            return _sure(ahead, len(VOCAB))[:, None, :], state
    logits, state = model(ids, state, training=False)
    return ops.log_softmax(logits, axis=-1), state
