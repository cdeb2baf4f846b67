"""Lesson 21: backpropagation (反向传播) through the MLP of lesson 01, by hand.

Lesson 01's MLP, as a chain of small functions, each with a forward pass
that keeps what its backward pass needs (the cache) and a backward pass
that turns the gradient of the loss with respect to its output into the
gradients with respect to its inputs and weights. The forward pass:

    A = X W1 + b1        X (B, D), W1 (D, Hd), b1 (Hd,) -> A (B, Hd)
    H = relu(A)                                           H (B, Hd)
    O = H W2 + b2        W2 (Hd, Q), b2 (Q,)           -> O (B, Q) logits
    L = (1/B) sum_i [logsumexp(o_i) - o_i[y_i]]          a scalar

Write dZ for dL/dZ, an array of Z's shape. Deriving each backward pass is
the lesson: the chain rule, one layer at a time, from the loss back to the
inputs (the hints carry it one rung at a time: the chain rule step, the
shapes, the formula). The conventions the grader fixes: every gradient has
the shape of what it is the gradient of; L is the mean over the batch;
relu's derivative at A == 0 is taken as 0 (TensorFlow's and d2l's
convention).

Then, as CS231n does: check your gradients numerically (centred
differences and the relative error, `gradient_check`), and train the MLP
with them (`train_mlp`): the grader trains it on the course's generated
images (m2t_data's toy_shapes) and asks for a held-out accuracy of at
least 0.75.

Why NumPy and not keras.ops here: NumPy has no gradient tape, so nothing
differentiates behind your back; every number of the gradient is one you
computed. The lesson is graded where no autodiff library can be imported;
the grader checks your gradients against its own derivation, against a
tape of its own and against centred differences of its own loss, all in
float64.

Reference: d2l 4.7 (5.3), "Forward propagation, backward propagation, and
computational graphs"; the softmax's gradient, d2l 3.4.6 (4.1.2); CS231n's
notes on gradient checks.
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
    # TODO(l21): the gradients of L with respect to X, W and b, derived by
    #   you through O = X W + b from dO and your cache: dO (B, U) -> dX (B,
    #   D), dW (D, U), db (U,), each the shape of what it is the gradient
    #   of. Return (dX, dW, db). Our solution is about 5 lines.
    #   中文：由你推导：经过 O = X W + b，从 dO 和缓存求 dX、dW、db。
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
        `(B, U)`: dL/dA (relu's derivative at `A == 0` taken as 0).
    """
    dH = np.asarray(dH, np.float64)
    # TODO(l21): dL/dA, derived by you through H = max(A, 0) from dH and
    #   your cache, relu's derivative at A == 0 taken as 0: dH (B, U) -> dA
    #   (B, U). Return dA. Our solution is about 2 lines.
    #   中文：由你推导：经过 H = max(A, 0) 求 dL/dA，A == 0 处导数取 0。
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
        `(loss, dlogits)`: the float L of the module docstring, and
        dL/dlogits `(B, Q)`.
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
    # TODO(l21): the module docstring's L, and dL/dlogits derived by you:
    #   logits (B, Q), labels (B,) -> loss float, dlogits (B, Q). Stable for
    #   logits of 1e4 (lesson 01's trick: no probability changes when a row
    #   is shifted). Return (loss, dlogits). Our solution is about 9 lines.
    #   中文：批量平均的交叉熵 L，以及你自己推导的 dL/dlogits。
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


def numerical_gradient(f, x, h: float = 1e-5):
    """The gradient of a scalar function by centred differences.

    Args:
        f: takes an array of x's shape, returns a float.
        x: float64 array (any shape), the point; left as it was given.
        h: float > 0, the step.

    Returns:
        x's shape: entry i is `(f(x + h e_i) - f(x - h e_i)) / (2 h)`, e_i
        the array of x's shape with 1 at i and 0 elsewhere.
    """
    if not h > 0:
        raise ValueError(f"`h` must be positive, got {h!r}")
    if not isinstance(x, np.ndarray) or x.dtype != np.float64:
        raise ValueError(f"`x` must be a float64 array, got {type(x)}")
    # TODO(l21): the centred difference of the docstring for every entry of
    #   x: x (any shape) -> grad (x's shape), f called twice per entry. x
    #   is left as it was given (restore every entry you change). Our
    #   solution is about 8 lines.
    #   中文：对 x 的每个元素做中心差分，f 每个元素调用两次；x 保持原样。
    # BEGIN SOLUTION
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        saved = x[index]
        x[index] = saved + h
        up = f(x)
        x[index] = saved - h
        down = f(x)
        x[index] = saved  # restored
        grad[index] = (up - down) / (2 * h)
    return grad
    # END SOLUTION


def relative_error(a, b) -> float:
    """CS231n's relative error of two arrays of one shape.

    Args:
        a, b: arrays of the same shape.

    Returns:
        The largest, over the entries, of `|a - b| / max(|a|, |b|)`; an
        entry where both are 0 counts as 0.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"`a` {a.shape} and `b` {b.shape} must agree")
    # TODO(l21): the docstring's relative error: a, b (any shape, the
    #   same) -> one float, the worst entry's; an entry where a and b are
    #   both 0 gives 0, not NaN. Our solution is about 3 lines.
    #   中文：CS231n 的相对误差，取最差的元素；a、b 都为 0 处记为 0。
    # BEGIN SOLUTION
    scale = np.maximum(np.abs(a), np.abs(b))
    ratio = np.abs(a - b) / np.where(scale > 0, scale, 1.0)  # 0/1 where 0
    return float(ratio.max(initial=0.0))
    # END SOLUTION


def gradient_check(f, x, analytic, h: float = 1e-5, threshold: float = 1e-6):
    """Check an analytic gradient of `f` at `x` against centred
    differences, as CS231n's gradient checks do.

    Args:
        f, x, h: as `numerical_gradient` takes them.
        analytic: x's shape, the gradient to check.
        threshold: float > 0, the largest relative error accepted.

    Returns:
        `(ok, error)`: `error` the `relative_error` of `analytic` and the
        numerical gradient (float), `ok` whether it is below `threshold`
        (a bool).
    """
    analytic = np.asarray(analytic, np.float64)
    if analytic.shape != np.shape(x):
        raise ValueError(
            f"`analytic` must have x's shape {np.shape(x)}, got "
            f"{analytic.shape}"
        )
    # TODO(l21): compare `analytic` with your numerical gradient of f at x
    #   by your relative error: f, x (any shape), analytic (x's shape) ->
    #   (ok bool, error float). Our solution is about 3 lines.
    #   中文：用你的相对误差比较解析梯度和数值梯度，返回 (是否通过, 误差)。
    # BEGIN SOLUTION
    numeric = numerical_gradient(f, x, h)
    error = relative_error(analytic, numeric)
    return bool(error < threshold), error
    # END SOLUTION


def train_mlp(X, y, params, lr: float, epochs: int, batch_size: int, seed=0):
    """Minibatch SGD on the MLP, with your own backward pass.

    Args:
        X: `(N, D)` inputs; y: `(N,)` integer labels in `[0, Q)`.
        params: dict with `W1 (D, Hd)`, `b1 (Hd,)`, `W2 (Hd, Q)`,
            `b2 (Q,)`, the starting point (left unchanged).
        lr: float > 0, the learning rate.
        epochs: int >= 1, passes over the data.
        batch_size: int >= 1; the last minibatch of an epoch may be smaller.
        seed: seeds `np.random.default_rng`, which draws each epoch's
            order of the examples (a permutation).

    Returns:
        `(params, losses)`: the trained weights (a new dict, the same keys
        and shapes) and `(epochs,)`, each epoch's mean loss over its
        examples (each minibatch's loss weighted by its size).
    """
    X, y = np.asarray(X, np.float64), np.asarray(y)
    if not lr > 0 or int(epochs) < 1 or int(batch_size) < 1:
        raise ValueError(
            f"`lr`, `epochs`, `batch_size` must be positive, got {lr!r}, "
            f"{epochs!r}, {batch_size!r}"
        )
    # TODO(l21): for each epoch, the examples in an order drawn from
    #   np.random.default_rng(seed), in minibatches of batch_size; each
    #   minibatch: the loss and gradients of mlp_loss_and_grads, then w <- w
    #   - lr dL/dw for the four weights. X (N, D), y (N,) -> losses
    #   (epochs,) and the trained params dict. Our solution is about 12
    #   lines.
    #   中文：小批量随机梯度下降：每轮按 default_rng(seed) 打乱顺序，用你的
    #   mlp_loss_and_grads 求梯度并更新四个权重；返回权重和每轮的平均损失。
    # BEGIN SOLUTION
    rng = np.random.default_rng(seed)
    params = {k: np.array(v, np.float64) for k, v in params.items()}  # copies
    losses = []
    for _ in range(int(epochs)):
        order = rng.permutation(len(X))
        total = 0.0
        for start in range(0, len(X), int(batch_size)):
            batch = order[start : start + int(batch_size)]
            loss, grads = mlp_loss_and_grads(X[batch], y[batch], params)
            for key in params:
                params[key] -= lr * grads[key]
            total += loss * len(batch)
        losses.append(total / len(X))
    return params, np.array(losses)
    # END SOLUTION
