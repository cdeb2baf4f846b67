# Appended to a correct l16 by tests/test_attacks.py: the lesson's layers are
# right, but the facts the worker measures about them are forged. Every
# gradient helper of the graders the worker has loaded is replaced (every
# gradient it returns is zero), and the Keras contract's facts all say
# "fine".
import sys as _sys

import numpy as _np


def _zeros(x):
    return _np.zeros_like(_np.asarray(x, dtype=_np.float64))


def _forged_tape(f, x, *args, **kwargs):
    return _zeros(x)


_FORGED = {
    "state_gradient": lambda call, h0, *w: _zeros(h0),
    "tape_gradient": _forged_tape,
}

for _name, _module in list(_sys.modules.items()):
    if _name.startswith("graders."):
        for _attr, _fake in _FORGED.items():
            if hasattr(_module, _attr):
                setattr(_module, _attr, _fake)
