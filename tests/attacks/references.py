# ruff: noqa: F821  (keras, ops, DotProductAttention, AdditiveAttention: from
# the skeleton around)
# Appended to the untouched l16 skeleton by tests/test_attacks.py: the
# lesson computes nothing itself. Each function hands the check's inputs to
# every public function of the graders the worker can import (the lesson's
# grader, graders/lib and the question experiments) and returns the first
# answer of the right shape: the judge's own references, where the worker
# holds them.
import importlib as _importlib

import numpy as _np

_MODULES = (
    "graders.test_l16_attention_scoring",
    "graders.lib.references",
    "graders.lib.cnn_references",
    "graders.lib.tapes",
    "m2t.questions.experiments",
)


def _functions():
    """Every public function of `_MODULES` (probes and checks left out:
    they would grade this very file), ref_* first."""
    found = []
    for name in _MODULES:
        try:
            module = _importlib.import_module(name)
        except Exception:  # noqa: BLE001
            continue
        for key, value in vars(module).items():
            if (
                key.startswith(("_", "test_", "run_"))
                or isinstance(value, type)
                or not callable(value)
                or hasattr(value, "raw")
            ):
                continue
            found.append((not key.startswith("ref_"), key, value))
    return [f for _, _, f in sorted(found, key=lambda t: t[:2])]


def _concrete(x):
    return None if x is None else _np.asarray(ops.convert_to_numpy(x))


def _oracle(accept, *args):
    """The first function's answer on `args` that `accept` takes."""
    args = [_concrete(a) for a in args]
    for fn in _functions():
        try:
            out = fn(*args)
            if accept(out):
                return out
        except Exception:  # noqa: BLE001
            continue
    raise RuntimeError("no function of the graders answers this")


def _is_array(shape):
    return lambda out: (
        isinstance(out, _np.ndarray)
        and out.shape == shape
        and out.dtype.kind == "f"
    )


def _is_pair(first, second):
    return lambda out: (
        isinstance(out, tuple)
        and len(out) == 2
        and _is_array(first)(_np.asarray(out[0]))
        and _is_array(second)(_np.asarray(out[1]))
    )


def masked_softmax(X, valid_lens=None):
    X = ops.convert_to_tensor(X)
    out = _oracle(_is_array(tuple(X.shape)), X, valid_lens)
    return ops.convert_to_tensor(out.astype("float32"))


def _attend(self, queries, keys, values, valid_lens, extra, return_weights):
    b, t, s, v = (
        queries.shape[0],
        queries.shape[1],
        keys.shape[1],
        values.shape[-1],
    )
    out, weights = _oracle(
        _is_pair((b, t, v), (b, t, s)),
        queries,
        keys,
        values,
        valid_lens,
        *extra,
    )
    out = ops.convert_to_tensor(_np.asarray(out, "float32"))
    weights = ops.convert_to_tensor(_np.asarray(weights, "float32"))
    return (out, weights) if return_weights else out


def _dot_call(
    self,
    queries,
    keys,
    values,
    valid_lens=None,
    training=None,
    return_attention_weights=False,
):
    return _attend(
        self, queries, keys, values, valid_lens, (), return_attention_weights
    )


def _additive_call(
    self,
    queries,
    keys,
    values,
    valid_lens=None,
    training=None,
    return_attention_weights=False,
):
    weights = [
        _np.asarray(layer.kernel) for layer in (self.W_q, self.W_k, self.w_v)
    ]
    return _attend(
        self,
        queries,
        keys,
        values,
        valid_lens,
        weights,
        return_attention_weights,
    )


DotProductAttention.call = _dot_call
AdditiveAttention.call = _additive_call
