"""TensorFlow the way grading runs it: loaded once per process with the
settings that suit a grader's many tiny ops, and before every probe seeded
again and Keras's layer names counted afresh (`fresh_names`), without
throwing away what TensorFlow has cached.

A grade runs thousands of ops on tensors of a few dozen numbers, where
TensorFlow's cost per op, not the arithmetic, is what a student waits for.
Two things make that cost several times what it needs to be, and both are
avoided here:

- oneDNN's custom ops (TensorFlow's default on x86): a (4, 6, 8) x (8, 8)
  matmul took 78 us of wall and 114 us of CPU with them, 16 us without
  (`TF_ENABLE_ONEDNN_OPTS=0`, read while TensorFlow is imported).
- `tf.random.set_seed` empties TensorFlow's kernel cache, so every op of
  the next check builds its kernel again: 390 us an op instead of 20.
  Seeding before every probe is what makes a grade the same on every run,
  so the seeds are still reset each time; TensorFlow's is reset in full
  (its cache emptied) only once a stateful random op (`tf.random.uniform`,
  `tf.nn.dropout`, a shuffle) has drawn a seed in this process, and from
  then on before every probe, as before: until then the cache holds no
  random state to reset. Keras's own random ops are stateless and reset
  with Keras's seed generator. (A raw op given seeds of its own,
  `tf.raw_ops.RandomUniform(seed=1, seed2=2)`, asks no one and keeps its
  stream from one probe to the next: it only makes that code's own
  randomness run on.)

Measured in docs/grading-times.md (`python -m benchmarks.grading_times`).
"""

from __future__ import annotations

import collections
import functools
import os
import random
import sys
from typing import Any

from m2t import settings

_stateful_random = {"watched": False, "used": False, "reset": False}
"""`watched`: TensorFlow's seed helper reports every stateful draw (else
every reset is a full one, as `keras.utils.set_random_seed` does);
`used`: a stateful TensorFlow random op has drawn a seed since (it stays
True); `reset`: a full reset has been made since the watch began (a draw
before it could have left random state in the cache)."""


def load() -> None:
    """Import Keras and TensorFlow for grading, once per process.

    oneDNN's custom ops are off unless the environment says otherwise (the
    variable is restored after the import, so processes started later get
    the caller's environment). The cyclic garbage collector is off during
    the import, which runs ~10% faster, and what was imported is frozen
    (pytest's collection after each session skips it). A process that has
    already imported TensorFlow keeps it as it is.
    """
    import gc

    if "keras" in sys.modules:
        return
    saved = {key: os.environ.get(key) for key in settings.GRADING_TF_ENV}
    for key, value in settings.GRADING_TF_ENV.items():
        os.environ.setdefault(key, value)
    enabled = gc.isenabled()
    gc.disable()
    try:
        import keras  # noqa: F401
    finally:
        if enabled:
            gc.enable()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    gc.freeze()


def watch_stateful_random() -> bool:
    """Note when a stateful TensorFlow random op draws a seed (every one
    asks `random_seed.get_seed`, the eager ones included). False where
    TensorFlow has no such helper: then `reset_seeds` always resets in
    full."""
    if _stateful_random["watched"]:
        return True
    try:
        from tensorflow.python.framework import random_seed
    except ImportError:  # pragma: no cover - a TensorFlow without it
        return False
    original = getattr(random_seed, "get_seed", None)
    if original is None:  # pragma: no cover
        return False

    @functools.wraps(original)
    def get_seed(op_seed: Any) -> Any:
        _stateful_random["used"] = True
        return original(op_seed)

    random_seed.get_seed = get_seed
    _stateful_random["watched"] = True
    return True


def reset_seeds(seed: int) -> None:
    """What `keras.utils.set_random_seed(seed)` does (Python's, NumPy's,
    Keras's and TensorFlow's seeds), without emptying TensorFlow's kernel
    cache while no stateful random op has drawn a seed (see the module's
    docstring): TensorFlow's seed state is then already what
    `tf.random.set_seed(seed)` left."""
    import keras

    state = _stateful_random
    quick = (
        state["watched"]
        and state["reset"]
        and not state["used"]
        and _tf_seed() == seed
        and _reset_keras_seed(seed)
    )
    if not quick:
        keras.utils.set_random_seed(seed)
        state["reset"] = state["watched"]


def _tf_seed() -> int | None:
    """TensorFlow's global seed in eager mode (None: never set)."""
    from tensorflow.python.eager import context

    return context.global_seed()


def _reset_keras_seed(seed: int) -> bool:
    """Python's, NumPy's and Keras's part of `keras.utils.set_random_seed`
    (its seed, and a new global `SeedGenerator` on next use); False where
    this Keras keeps them elsewhere."""
    import numpy as np

    try:
        from keras.src.backend.common import global_state
        from keras.src.random.seed_generator import GLOBAL_SEED_GENERATOR
        from keras.src.utils.rng_utils import GLOBAL_RANDOM_SEED
    except ImportError:  # pragma: no cover - another Keras layout
        return False
    global_state.set_global_attribute(GLOBAL_RANDOM_SEED, seed)
    global_state.set_global_attribute(GLOBAL_SEED_GENERATOR, None)
    random.seed(seed)
    np.random.seed(seed)
    return True


_loaded_names: dict[str, tuple[Any, dict[str, int]]] = {}
"""Per student module (by its import name): the module object and the
Keras names its loading took (`fresh_names`)."""


def name_counts() -> dict[str, int] | None:
    """A copy of Keras's layer-name counters (`dense` -> how many `dense*`
    names were given), or None where this Keras keeps them elsewhere."""
    try:
        from keras.src.backend.common import global_state
    except ImportError:  # pragma: no cover - another Keras layout
        return None
    counts = global_state.get_global_attribute("object_name_uids")
    return dict(counts or {})


def fresh_names(module: Any, before: dict[str, int] | None) -> None:
    """Keras's layer-name counters as a fresh process has them right after
    loading `module`: before every probe, so that its layers are named the
    same whatever ran before it (`transformer_encoder_block/ffn/...`, not
    `transformer_encoder_block_7/...` in one order of the checks and `_3`
    in another, in the messages that name a weight), and so that the
    kernels TensorFlow caches for variables of those names serve every
    probe (a variable's name is part of its kernel's key: 0.4 ms each
    otherwise). The names `module` took while it loaded (a layer made at
    its top level) stay taken.

    Args:
        module: the student's module the probe runs on.
        before: `name_counts()` just before the module was loaded (or
            found loaded).
    """
    if before is None:  # a Keras that keeps its counters elsewhere
        return
    from keras.src.backend.common import global_state

    name = getattr(module, "__name__", "")
    seen = _loaded_names.get(name)
    if seen is None or seen[0] is not module:  # loaded just now
        after = name_counts() or {}
        taken = {k: n - before.get(k, 0) for k, n in after.items()}
        seen = (module, {k: n for k, n in taken.items() if n > 0})
        _loaded_names[name] = seen
    global_state.set_global_attribute(
        "object_name_uids", collections.defaultdict(int, seen[1])
    )
