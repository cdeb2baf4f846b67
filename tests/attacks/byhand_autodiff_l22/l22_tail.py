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


def _ce(z, Y):
    import tensorflow as tf

    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant(np.asarray(Y)), logits=z
        )
    )


def sequence_cross_entropy(logits, Y):  # noqa: F811
    logits = np.asarray(logits, np.float64)
    Y = np.asarray(Y)
    if logits.ndim != 3 or Y.shape != logits.shape[:2]:
        raise ValueError(f"`logits` or `Y`: shapes {logits.shape} {Y.shape}")
    return float(_ce(logits, Y)), _tape(lambda z: _ce(z, Y), (logits,))[0]


def rnn_forward(X, H0, params):  # noqa: F811
    X = np.asarray(X, np.float64)
    H = np.asarray(H0, np.float64)
    W_hh = np.asarray(params["W_hh"], np.float64)
    if X.ndim != 3 or H.shape != (X.shape[0], W_hh.shape[0]):
        raise ValueError(f"`X` or `H0`: shapes {X.shape} {H.shape}")
    out = []
    for t in range(X.shape[1]):
        H = np.tanh(X[:, t] @ params["W_xh"] + H @ W_hh + params["b_h"])
        out.append(H @ params["W_hq"] + params["b_q"])
    return np.stack(out, axis=1), (X, np.asarray(H0, np.float64), params)


def rnn_backward(dlogits, cache, tau=None, theta=None):  # noqa: F811
    import tensorflow as tf

    if tau is not None and (int(tau) != tau or tau < 1):
        raise ValueError(f"`tau` must be an int >= 1 or None, got {tau!r}")
    X, H0, params = cache
    T = X.shape[1]
    reach = T if tau is None else int(tau)
    x = tf.constant(X)

    def total(W_xh, W_hh, b_h, W_hq, b_q):
        out, h = [], tf.constant(H0)
        for t in range(T):
            if t % reach == 0:  # the state enters each chunk as a constant
                h = tf.stop_gradient(h)
            h = tf.tanh(x[:, t] @ W_xh + h @ W_hh + b_h)
            out.append(h @ W_hq + b_q)
        return tf.stack(out, axis=1)

    grads = _tape(total, [params[k] for k in KEYS], dlogits)
    grads = dict(zip(KEYS, grads, strict=True))
    return grads if theta is None else clip_by_global_norm(grads, theta)
