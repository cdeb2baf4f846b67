"""Lesson 21: backpropagation (反向传播) through the MLP of lesson 01, by hand.

Lesson 01's MLP, as a chain of small functions, each with a forward pass
that keeps what its backward pass needs (the cache) and a backward pass
that turns the gradient of the loss with respect to its output into the
gradients with respect to its inputs and weights:

    A = X W1 + b1        X (B, D), W1 (D, Hd), b1 (Hd,) -> A (B, Hd)
    H = relu(A)                                           H (B, Hd)
    O = H W2 + b2        W2 (Hd, Q), b2 (Q,)           -> O (B, Q) logits
    L = (1/B) sum_i [logsumexp(o_i) - o_i[y_i]]          a scalar

Write dZ for dL/dZ, an array of Z's shape. The chain rule, one layer at a
time, from the loss back to the inputs:

    dO  = (softmax(O) - onehot(y)) / B                   (B, Q)
    dW2 = H^T dO      (Hd, Q)      db2 = sum over the batch of dO  (Q,)
    dH  = dO W2^T     (B, Hd)
    dA  = dH * [A > 0]                                   (B, Hd)
    dW1 = X^T dA      (D, Hd)      db1 = sum over the batch of dA  (Hd,)

A linear layer's backward is two matrix products and a sum: every gradient
has the shape of the thing it is the gradient of, which fixes where each
transpose goes. The bias is added to every row, so its gradient collects
(sums) the rows. The ReLU passes the gradient where its input was positive
and blocks it elsewhere (at A = 0 too: the convention of TensorFlow and
d2l). The 1/B comes from the mean over the batch.

Why NumPy and not keras.ops here: NumPy has no gradient tape, so nothing
differentiates behind your back; every number of the gradient is one you
computed (the grader checks them against a tape of its own, in float64).

Reference: d2l 4.7 (5.3), "Forward propagation, backward propagation, and
computational graphs"; the softmax's gradient, d2l 3.4.6 (4.1.2).
"""

import numpy as np


def linear_forward(X, W, b):
    """An affine layer, keeping what its backward pass needs.

    Args:
        X: `(B, D)` inputs.
        W: `(D, U)` weights.
        b: `(U,)` bias.

    Returns:
        `(O, cache)`: `O = X W + b` of shape `(B, U)`, and whatever
        `linear_backward` will need (yours to choose).
    """
    X, W, b = (np.asarray(a, np.float64) for a in (X, W, b))
    if W.ndim != 2 or X.ndim != 2 or X.shape[1] != W.shape[0]:
        raise ValueError(
            f"`X` (B, D) and `W` (D, U) must agree on D, got shapes "
            f"{X.shape} and {W.shape}"
        )
    if b.shape != W.shape[1:]:
        raise ValueError(f"`b` must have shape {W.shape[1:]}, got {b.shape}")
    # TODO(l21): O = X W + b: X (B, D), W (D, U), b (U,) -> O (B, U), the bias
    #   added to every row. Keep in `cache` what linear_backward needs to turn
    #   dO into dX, dW and db (read its docstring first). Return (O, cache).
    #   Our solution is about 3 lines.
    #   中文：O = X W + b，并把反向传播要用的 X 和 W 存进缓存。
    # BEGIN SOLUTION
    out = X @ W + b  # O, (B, U)
    cache = (X, W)  # the backward pass needs the input and the weights
    return out, cache
    # END SOLUTION


def linear_backward(dO, cache):
    """The backward pass of `linear_forward`.

    Args:
        dO: `(B, U)`, dL/dO.
        cache: what `linear_forward` returned beside O.

    Returns:
        `(dX, dW, db)`: dL/dX `(B, D)`, dL/dW `(D, U)`, dL/db `(U,)`.
    """
    dO = np.asarray(dO, np.float64)
    # TODO(l21): the module docstring's linear backward: dX = dO W^T, dW = X^T
    #   dO, db = the sum of dO's rows: dO (B, U) -> dX (B, D), dW (D, U), db
    #   (U,), each the shape of what it is the gradient of. Return (dX, dW,
    #   db). Our solution is about 5 lines.
    #   中文：dX = dO W^T，dW = X^T dO，db 是 dO 各行之和。
    # BEGIN SOLUTION
    X, W = cache
    dX = dO @ W.T  # (B, U) x (U, D) -> (B, D)
    dW = X.T @ dO  # (D, B) x (B, U) -> (D, U)
    db = dO.sum(axis=0)  # b was added to every row: sum them, (U,)
    return dX, dW, db
    # END SOLUTION


def relu_forward(A):
    """ReLU, keeping what its backward pass needs.

    Args:
        A: `(B, U)` (any shape) pre-activations.

    Returns:
        `(H, cache)`: `H = max(A, 0)`, the shape of A, and the cache.
    """
    A = np.asarray(A, np.float64)
    # TODO(l21): H = max(A, 0), entry by entry: A (B, U) -> H (B, U). Keep in
    #   `cache` what relu_backward needs. Return (H, cache). Our solution is
    #   about 3 lines.
    #   中文：H = max(A, 0)，把 A 存进缓存。
    # BEGIN SOLUTION
    H = np.maximum(A, 0.0)  # (B, U)
    cache = A  # where A > 0 is all the backward pass needs
    return H, cache
    # END SOLUTION


def relu_backward(dH, cache):
    """The backward pass of `relu_forward`.

    Args:
        dH: `(B, U)`, dL/dH.
        cache: what `relu_forward` returned beside H.

    Returns:
        `(B, U)`: dL/dA, `dH` where `A > 0`, else 0 (at `A == 0` too).
    """
    dH = np.asarray(dH, np.float64)
    # TODO(l21): dA = dH * [A > 0]: the gradient passes where the input was
    #   strictly positive and is 0 elsewhere, A == 0 included: dH (B, U) -> dA
    #   (B, U). Return dA. Our solution is about 2 lines.
    #   中文：只在 A > 0 处让梯度通过，A == 0 处为 0。
    # BEGIN SOLUTION
    A = cache
    return dH * (A > 0)  # (B, U)
    # END SOLUTION


def softmax_cross_entropy_loss(logits, labels):
    """The mean softmax cross-entropy of a batch and its gradient.

    Args:
        logits: `(B, Q)` unnormalised scores O.
        labels: `(B,)` integers in `[0, Q)`.

    Returns:
        `(loss, dlogits)`: the float `L = (1/B) sum_i [logsumexp(o_i) -
        o_i[y_i]]`, and dL/dlogits `(B, Q)`.
    """
    logits = np.asarray(logits, np.float64)
    labels = np.asarray(labels)
    if logits.ndim != 2:
        raise ValueError(
            f"`logits` must have shape (B, Q), got shape {logits.shape}"
        )
    if labels.shape != logits.shape[:1]:
        raise ValueError(
            f"`labels` must have shape {logits.shape[:1]}, got shape "
            f"{labels.shape}"
        )
    # TODO(l21): the module docstring's L and dO: logits (B, Q), labels (B,)
    #   -> loss float, dlogits (B, Q) = (softmax(logits) - onehot(labels)) / B.
    #   Stable for logits of 1e4 (lesson 01's trick: subtract each row's max
    #   first). Return (loss, dlogits). Our solution is about 9 lines.
    #   中文：批量平均的交叉熵，梯度为 (softmax - onehot) / B。
    # BEGIN SOLUTION
    B = logits.shape[0]
    rows = np.arange(B)
    shifted = logits - logits.max(axis=1, keepdims=True)  # (B, Q), <= 0
    exp = np.exp(shifted)
    log_probs = shifted - np.log(exp.sum(axis=1, keepdims=True))  # (B, Q)
    loss = -log_probs[rows, labels].mean()
    dlogits = exp / exp.sum(axis=1, keepdims=True)  # softmax, (B, Q)
    dlogits[rows, labels] -= 1.0  # minus the one-hot labels
    return float(loss), dlogits / B  # the mean's 1/B
    # END SOLUTION


def mlp_loss_and_grads(X, y, params):
    """The loss of lesson 01's MLP on a batch and its gradients, by hand.

    Args:
        X: `(B, D)` inputs.
        y: `(B,)` integer labels in `[0, Q)`.
        params: dict with `W1 (D, Hd)`, `b1 (Hd,)`, `W2 (Hd, Q)`,
            `b2 (Q,)`.

    Returns:
        `(loss, grads)`: the float L of the module docstring, and a dict
        with the same keys as `params`, each dL/d(that weight), of its
        shape.
    """
    X = np.asarray(X, np.float64)
    # TODO(l21): the module docstring's forward pass with this module's
    #   functions, keeping each cache: X (B, D) -> A, H (B, Hd) -> O (B, Q)
    #   -> loss; then the backward pass in reverse order: dO (B, Q) -> dH (B,
    #   Hd) -> dA (B, Hd) -> the four weight gradients. Return (loss, {"W1":
    #   dW1, "b1": db1, "W2": dW2, "b2": db2}). Our solution is about 8 lines.
    #   中文：前向：线性、relu、线性、损失；反向按相反顺序，返回四个梯度。
    # BEGIN SOLUTION
    A, cache1 = linear_forward(X, params["W1"], params["b1"])  # (B, Hd)
    H, cache_relu = relu_forward(A)  # (B, Hd)
    logits, cache2 = linear_forward(H, params["W2"], params["b2"])  # (B, Q)
    loss, dO = softmax_cross_entropy_loss(logits, y)
    dH, dW2, db2 = linear_backward(dO, cache2)  # (B, Hd)
    dA = relu_backward(dH, cache_relu)  # (B, Hd)
    _, dW1, db1 = linear_backward(dA, cache1)  # dX is not needed
    return loss, {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}
    # END SOLUTION
