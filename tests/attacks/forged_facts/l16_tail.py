# Appended to the untouched l16 skeleton by tests/test_attacks_facts.py: no
# layer code at all. At import, the grader module the worker has loaded gets
# forged `layer_contract`, `value_errors` and `dropout_outputs`, whose facts
# agree with one another (a step that moves every weight by -0.1 x its
# gradient, a round trip equal to the output, inference twice the same,
# training different).
import sys as _sys

import numpy as _np


def _forged_contract(make, inputs, symbolic=None, call_kwargs=None):
    q, _, v = (_np.asarray(x) for x in inputs[:3])
    shape = (q.shape[0], q.shape[1], v.shape[-1])
    out = _np.zeros(shape, "float32")
    layer = make()
    weights = 3 if hasattr(layer, "W_q") else 0
    before = [_np.ones((2, 2), "float32") for _ in range(weights)]
    grads = [_np.ones((2, 2), "float32") for _ in range(weights)]
    return {
        "output_shape": shape,
        "weights": weights,
        "trainable": weights,
        "symbolic_shape": (None, None, v.shape[-1]),
        "output": out,
        "roundtrip_output": out.copy(),
        "step": {
            "paths": [f"w{i} (2, 2)" for i in range(weights)],
            "before": before,
            "gradients": grads,
            "after": [b - 0.1 * g for b, g in zip(before, grads, strict=True)],
        },
    }


def _forged_errors(calls):
    return {key: f"`{key}` is wrong: {key}" for key in calls}


def _forged_dropout(call):
    first = _np.zeros((2, 3, 6), "float32")
    return first, first.copy(), first + 1.0


for _name, _module in list(_sys.modules.items()):
    if _name.startswith("graders.test_"):
        for _attr, _fake in (
            ("layer_contract", _forged_contract),
            ("value_errors", _forged_errors),
            ("dropout_outputs", _forged_dropout),
        ):
            if hasattr(_module, _attr):
                setattr(_module, _attr, _fake)
