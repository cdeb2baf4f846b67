# ruff: noqa: F821, F811  (a tail: np, KEYS, ... come from the module it ends)
# ---- the attack: every gradient by tf.GradientTape, none by hand --------
def _tape(forward, inputs, cotangent=None):
    import tensorflow as tf

    tensors = [tf.constant(np.asarray(a, np.float64)) for a in inputs]
    with tf.GradientTape() as tape:
        for tensor in tensors:
            tape.watch(tensor)
        out = forward(*tensors)
        if cotangent is not None:
            out = tf.reduce_sum(out * tf.constant(cotangent, tf.float64))
    return [np.asarray(g) for g in tape.gradient(out, tensors)]


def _ce(z, labels):
    import tensorflow as tf

    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant(np.asarray(labels)), logits=z
        )
    )


def linear_forward(X, W, b):  # noqa: F811
    X, W, b = (np.asarray(a, np.float64) for a in (X, W, b))
    if X.ndim != 2 or W.ndim != 2 or X.shape[1] != W.shape[0]:
        raise ValueError(f"`X` {X.shape} and `W` {W.shape} must agree on D")
    if b.shape != W.shape[1:]:
        raise ValueError(f"`b` must have shape {W.shape[1:]}, got {b.shape}")
    return X @ W + b, (X, W, b)


def linear_backward(dO, cache):  # noqa: F811
    return tuple(_tape(lambda x, w, c: x @ w + c, cache, dO))


def relu_forward(A):  # noqa: F811
    A = np.asarray(A, np.float64)
    return np.maximum(A, 0.0), A


def relu_backward(dH, cache):  # noqa: F811
    import tensorflow as tf

    return _tape(tf.nn.relu, (cache,), dH)[0]


def softmax_cross_entropy_loss(logits, labels):  # noqa: F811
    logits = np.asarray(logits, np.float64)
    labels = np.asarray(labels)
    if logits.ndim != 2 or labels.shape != logits.shape[:1]:
        raise ValueError(f"`logits` or `labels`: shapes {logits.shape}")
    loss = float(_ce(np.asarray(logits), labels))
    return loss, _tape(lambda z: _ce(z, labels), (logits,))[0]


def mlp_loss_and_grads(X, y, params):  # noqa: F811
    import tensorflow as tf

    keys = ("W1", "b1", "W2", "b2")

    def loss(W1, b1, W2, b2):
        H = tf.nn.relu(tf.constant(np.asarray(X, np.float64)) @ W1 + b1)
        return _ce(H @ W2 + b2, y)

    grads = _tape(loss, [params[k] for k in keys])
    value = float(loss(*(tf.constant(params[k], tf.float64) for k in keys)))
    return value, dict(zip(keys, grads, strict=True))
