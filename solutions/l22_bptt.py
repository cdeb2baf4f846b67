"""Lesson 22: backpropagation through time (通过时间反向传播), by hand.

Lesson 08's RNN, unrolled over T steps, differentiated step by step. With
inputs X_t (B, D) (one-hot tokens in lesson 08, where D = V) and the state
H_0 given, the forward pass is

    A_t = X_t W_xh + H_{t-1} W_hh + b_h,    H_t = tanh(A_t)      (B, U)
    O_t = H_t W_hq + b_q                                        (B, Q)
    L   = (1 / (B T)) sum_{b, t} [logsumexp(o_bt) - o_bt[y_bt]]

W_xh (D, U), W_hh (U, U), b_h (U,), W_hq (U, Q), b_q (Q,): the same weights
at every step. L is the mean over all B T tokens (d2l's 1/T sum_t,
averaged over the batch too). The backward pass is yours to derive (the
hints carry the chain rule, one step at a time); what the grader fixes:

- The full gradient is ONE reverse sweep over the steps, t = T, ..., 1,
  carrying the gradient that reaches H_t from the later steps: its cost
  is about that of the forward pass, O(T), not one chain per loss term
  (O(T^2)).
- Truncation (截断) as it is practised: the sequence is cut into chunks
  of tau steps, steps 1..tau, tau+1..2 tau, ..., and the state entering
  each chunk is a constant: no gradient crosses a chunk boundary. This is
  lesson 07's sequential partitioning with the state detached between
  minibatches (d2l's `detach`), here inside one sequence. It is not d2l
  8.7.1.2's (9.7.1.2) "regular truncation", where the loss term of EVERY
  step t reaches tau steps back from t: the two give different gradients.
  tau = None (or tau >= T) is the full gradient. The output layer's
  gradients are not truncated.
- Gradient clipping (梯度裁剪, d2l 9.5): once the five gradients are
  summed, scale them all together by min(1, theta / ||g||), with ||g||
  the L2 norm of all five as one vector.

NumPy, like lesson 21: no tape computes anything for you (this lesson is
graded where no autodiff library can be imported). The grader checks your
gradients against its own float64 derivation, against `tf.GradientTape`
on its own forward pass (the chunks: a stop-gradient at each boundary),
and against centred differences of its own loss.

Reference: d2l 8.7 (9.7), "Backpropagation through time"; 8.5 (9.5) for
the clipping; 8.3.4 (9.3.4) for sequential partitioning.
"""

import numpy as np

KEYS = ("W_xh", "W_hh", "b_h", "W_hq", "b_q")
"""The weights of the RNN, in lesson 08's order."""


def rnn_forward(X, H0, params):
    """The RNN of the module docstring over T steps, keeping a cache.

    Args:
        X: `(B, T, D)` inputs (one-hot tokens, or any features).
        H0: `(B, U)` the state before the first step.
        params: dict with the five weights of `KEYS`.

    Returns:
        `(logits, cache)`: the O_t stacked on axis 1, `(B, T, Q)`, and what
        `rnn_backward` needs (yours to choose).
    """
    X = np.asarray(X, np.float64)
    H = np.asarray(H0, np.float64)
    if X.ndim != 3:
        raise ValueError(f"`X` must have shape (B, T, D), got {X.shape}")
    W_xh, W_hh, b_h, W_hq, b_q = (
        np.asarray(params[k], np.float64) for k in KEYS
    )
    if H.shape != (X.shape[0], W_hh.shape[0]):
        raise ValueError(
            f"`H0` must have shape (B, U) = {(X.shape[0], W_hh.shape[0])}, "
            f"got {H.shape}"
        )
    # TODO(l22): the module docstring's recurrence for t = 1 .. T, from H_0 =
    #   H0: X (B, T, D) -> H_t (B, U) each -> logits (B, T, Q), the O_t in time
    #   order on axis 1. Keep in `cache` what rnn_backward needs: the inputs,
    #   every state H_0 .. H_T and the weights its chain rule multiplies by.
    #   Return (logits, cache). Our solution is about 8 lines.
    #   中文：逐步前向计算，缓存中保存全部隐状态（H_0 在前）。
    # BEGIN SOLUTION
    states = [H]  # H_0, then H_1 .. H_T
    outputs = []
    for t in range(X.shape[1]):
        H = np.tanh(X[:, t] @ W_xh + H @ W_hh + b_h)  # (B, U)
        states.append(H)
        outputs.append(H @ W_hq + b_q)  # (B, Q)
    cache = (X, states, W_hh, W_hq)
    return np.stack(outputs, axis=1), cache  # (B, T, Q)
    # END SOLUTION


def sequence_cross_entropy(logits, Y):
    """The mean softmax cross-entropy over all B T tokens, and its gradient.

    Args:
        logits: `(B, T, Q)` unnormalised scores.
        Y: `(B, T)` integer labels in `[0, Q)`.

    Returns:
        `(loss, dlogits)`: the float L of the module docstring and
        dL/dlogits `(B, T, Q)`.
    """
    logits = np.asarray(logits, np.float64)
    Y = np.asarray(Y)
    if logits.ndim != 3:
        raise ValueError(
            f"`logits` must have shape (B, T, Q), got shape {logits.shape}"
        )
    if Y.shape != logits.shape[:2]:
        raise ValueError(
            f"`Y` must have shape {logits.shape[:2]}, got shape {Y.shape}"
        )
    # TODO(l22): the module docstring's L, the mean over all B T tokens, and
    #   dL/dlogits, derived by you: logits (B, T, Q), Y (B, T) -> loss float,
    #   dlogits (B, T, Q). Stable for logits of 1e4. Return (loss, dlogits).
    #   Our solution is about 7 lines.
    #   中文：对全部 B T 个词元平均的交叉熵，以及你自己推导的 dL/dlogits。
    # BEGIN SOLUTION
    shifted = logits - logits.max(axis=-1, keepdims=True)  # (B, T, Q), <= 0
    exp = np.exp(shifted)
    norm = exp.sum(axis=-1, keepdims=True)  # (B, T, 1)
    picked = np.take_along_axis(shifted, Y[..., None], axis=-1)  # (B, T, 1)
    loss = np.mean(np.log(norm) - picked)
    onehot = np.eye(logits.shape[-1])[Y]  # (B, T, Q)
    return float(loss), (exp / norm - onehot) / Y.size  # 1/(B T): the mean
    # END SOLUTION


def clip_by_global_norm(grads, theta: float):
    """Scale every gradient by `min(1, theta / ||g||)`, one factor for all.

    Args:
        grads: dict name -> array (any shapes).
        theta: float > 0, the largest norm allowed.

    Returns:
        dict with the same keys and shapes; unchanged when `||g|| <=
        theta`, where `||g||` is the L2 norm of all the arrays together.
    """
    if not theta > 0:
        raise ValueError(f"`theta` must be positive, got {theta!r}")
    # TODO(l22): g <- min(1, theta / ||g||) g, ||g|| the L2 norm of ALL the
    #   arrays as one vector (one number): grads dict[name -> (...)] ->
    #   dict[name -> (...)], the same keys and shapes. All-zero gradients
    #   come back as they are (no NaN). Our solution is about 3 lines.
    #   中文：梯度裁剪：所有数组合在一起的范数，
    #   缩放因子为 min(1, theta / norm)。
    # BEGIN SOLUTION
    norm = np.sqrt(sum(np.sum(g**2) for g in grads.values()))
    scale = min(1.0, theta / norm) if norm > 0 else 1.0
    return {name: g * scale for name, g in grads.items()}
    # END SOLUTION


def rnn_backward(dlogits, cache, tau: int | None = None, theta=None):
    """Backpropagation through time: the gradients of the five weights.

    Args:
        dlogits: `(B, T, Q)`, dL/dlogits.
        cache: what `rnn_forward` returned beside the logits.
        tau: int >= 1, the chunk length of the truncation (the state
            entering steps tau+1, 2 tau+1, ... is a constant), or None for
            the full gradient.
        theta: float > 0, clip the summed gradients to this global norm,
            or None for no clipping.

    Returns:
        dict with the keys of `KEYS`, each dL/d(that weight), of its shape.
    """
    dlogits = np.asarray(dlogits, np.float64)
    if tau is not None and (int(tau) != tau or tau < 1):
        raise ValueError(f"`tau` must be an int >= 1 or None, got {tau!r}")
    if theta is not None and not theta > 0:
        raise ValueError(f"`theta` must be positive or None, got {theta!r}")
    # TODO(l22): the gradients of the five weights in ONE reverse sweep, t =
    #   T .. 1, O(T): dlogits (B, T, Q) and the cache -> grads dict[each name
    #   of KEYS -> its weight's shape], carrying from step to step the
    #   gradient (B, U) that reaches H_t from the later steps. With tau, no
    #   gradient crosses into the previous chunk of tau steps (the module
    #   docstring's cut). Then, when theta is given, clip the summed
    #   gradients with clip_by_global_norm. Our solution is about 20 lines
    #   (the five zero arrays take 7).
    #   中文：一次反向扫描（O(T)）求五个权重的梯度，逐步携带从后面
    #   时间步传到 H_t 的梯度；给了 tau 时梯度不跨过长为 tau 的块的边界；
    #   最后裁剪一次。
    # BEGIN SOLUTION
    X, states, W_hh, W_hq = cache
    T = X.shape[1]
    grads = {
        "W_xh": np.zeros((X.shape[2], W_hh.shape[0])),
        "W_hh": np.zeros_like(W_hh),
        "b_h": np.zeros(W_hh.shape[0]),
        "W_hq": np.zeros_like(W_hq),
        "b_q": np.zeros(W_hq.shape[1]),
    }
    dH_next = np.zeros_like(states[0])  # from steps after t, (B, U)
    for t in range(T - 1, -1, -1):  # one reverse sweep (0-based steps)
        dO = dlogits[:, t]  # (B, Q)
        grads["W_hq"] += states[t + 1].T @ dO  # (U, Q)
        grads["b_q"] += dO.sum(axis=0)
        dH = dO @ W_hq.T + dH_next  # all that reaches H_t, (B, U)
        dA = dH * (1.0 - states[t + 1] ** 2)  # through tanh, (B, U)
        step = {
            "W_xh": X[:, t].T @ dA,  # (D, U)
            "W_hh": states[t].T @ dA,  # H_{t-1}^T dA_t, (U, U)
            "b_h": dA.sum(axis=0),  # (U,)
        }
        for name, g in step.items():
            grads[name] += g  # the same weights at every step: sum
        dH_next = dA @ W_hh.T  # on to H_{t-1}, (B, U)
        if tau is not None and t % tau == 0:
            dH_next = np.zeros_like(dH_next)  # a chunk begins: cut here
    return grads if theta is None else clip_by_global_norm(grads, theta)
    # END SOLUTION


def rnn_loss_and_grads(X, Y, H0, params, tau=None, theta=None):
    """The loss of the RNN on a batch of sequences and its gradients.

    Args:
        X: `(B, T, D)` inputs; Y: `(B, T)` labels; H0: `(B, U)` the state
            before the first step; params: the five weights of `KEYS`.
        tau, theta: as `rnn_backward` takes them.

    Returns:
        `(loss, grads)`: the float L and the dict of the five gradients.
    """
    logits, cache = rnn_forward(X, H0, params)
    loss, dlogits = sequence_cross_entropy(logits, Y)
    return loss, rnn_backward(dlogits, cache, tau, theta)
