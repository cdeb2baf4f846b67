"""Lesson 01: the multilayer perceptron (多层感知机), from scratch.

One hidden layer between the inputs and the outputs, with a nonlinearity
(激活函数) between them:

    H = relu(X W1 + b1)          X (B, D), W1 (D, Hd), b1 (Hd,) -> H (B, Hd)
    O = H W2 + b2                W2 (Hd, Q), b2 (Q,)           -> O (B, Q)
    relu(x) = max(x, 0)

Without the relu the two layers collapse into one affine map
(X W1 W2 + b1 W2 + b2): depth buys nothing without a nonlinearity.

The outputs O are logits (未规范化的预测); the loss is the softmax
cross-entropy (交叉熵损失) of the logits and integer labels y:

    loss_i = -log softmax(o_i)[y_i] = logsumexp(o_i) - o_i[y_i],
    logsumexp(o) = m + log sum_j exp(o_j - m),   m = max_j o_j.

Subtracting the max first keeps every exp() in (0, 1]: the naive
exp(o_j) overflows to inf for o_j above ~88 in float32 (and gives NaN).

Reference: d2l 4.2-4.3 (5.1-5.2), "Implementation of multilayer perceptrons
from scratch"; 3.7 (4.5) "LogSumExp trick".
"""

import keras
from keras import ops


def relu(x):
    """The rectified linear unit, elementwise: `max(x, 0)`.

    Args:
        x: a tensor of any shape.

    Returns:
        A tensor of the same shape and dtype: `x` where `x > 0`, else 0.
    """
    x = ops.convert_to_tensor(x)
    # TODO(l01): relu(x) = max(x, 0), entry by entry: x (...) -> (...), the same
    #   shape and dtype; an entry <= 0 becomes 0, every other entry passes
    #   through unchanged. Our solution is 1 line.
    #   中文：逐元素的 relu，形状和 dtype 不变；<= 0 的元素变成 0，
    #   其余原样通过。
    # BEGIN SOLUTION
    return ops.maximum(x, ops.zeros_like(x))
    # END SOLUTION


class Linear(keras.layers.Layer):
    """A fully connected layer with its own weights: `inputs @ W + b`.

    Args:
        units: int, the output size U.

    Call arguments:
        inputs: `(B, D)` (or `(..., D)`: the last axis is the features).

    Returns:
        `(B, U)` (or `(..., U)`).

    Weights: `kernel (D, U)` (Glorot uniform), `bias (U,)` (zeros).
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        if int(units) != units or units <= 0:
            raise ValueError(f"`units` must be a positive int, got {units!r}")
        self.units = int(units)

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.units),
            initializer="glorot_uniform",
            name="kernel",
        )
        self.bias = self.add_weight(
            shape=(self.units,), initializer="zeros", name="bias"
        )

    def call(self, inputs):
        # TODO(l01): O = X W + b with W = self.kernel (D, U) and b = self.bias
        #   (U,): inputs X (B, D) -> O (B, U), the same b added to every row.
        #   Return O. Our solution is 1 line.
        #   中文：仿射变换 O = X W + b，同一个偏置加到每一行上。
        # BEGIN SOLUTION
        return ops.matmul(inputs, self.kernel) + self.bias
        # END SOLUTION

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.units)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


class MLP(keras.layers.Layer):
    """A multilayer perceptron with one hidden layer of `num_hiddens` ReLUs.

    Args:
        num_hiddens: int, Hd, the hidden layer's width (d2l: 256).
        num_outputs: int, Q, the number of classes (d2l: 10).

    Call arguments:
        inputs: `(B, ...)`, e.g. images `(B, 28, 28, 1)`; everything after
            the batch axis is flattened into D features.

    Returns:
        `(B, Q)` logits (no softmax: the loss takes logits).

    Sublayers: `hidden = Linear(num_hiddens)`, `output_layer =
    Linear(num_outputs)`.
    """

    def __init__(self, num_hiddens: int, num_outputs: int, **kwargs):
        super().__init__(**kwargs)
        for name, value in (
            ("num_hiddens", num_hiddens),
            ("num_outputs", num_outputs),
        ):
            if int(value) != value or value <= 0:
                raise ValueError(
                    f"`{name}` must be a positive int, got {value!r}"
                )
        self.num_hiddens = int(num_hiddens)
        self.num_outputs = int(num_outputs)
        # Sublayers share this layer's dtype policy, so a float64 MLP
        # computes in float64 all the way through (the gradient check).
        self.hidden = Linear(
            num_hiddens, name="hidden", dtype=self.dtype_policy
        )
        self.output_layer = Linear(
            num_outputs, name="output", dtype=self.dtype_policy
        )

    def build(self, input_shape):
        self.num_inputs = 1
        for size in input_shape[1:]:
            self.num_inputs *= int(size)
        self.hidden.build((None, self.num_inputs))
        self.output_layer.build((None, self.num_hiddens))

    def call(self, inputs):
        X = ops.reshape(inputs, (-1, self.num_inputs))  # (B, D)
        # TODO(l01): H = relu(X W1 + b1), O = H W2 + b2 (the module docstring),
        #   where self.hidden is the first affine map and self.output_layer the
        #   second: X (B, D) -> H (B, Hd) -> O (B, Q). O is logits: nothing
        #   follows the output layer. Return O. Our solution is 2 lines.
        #   中文：隐藏层之后接 relu，再经过输出层；输出是 logits，
        #   后面什么都不接。
        # BEGIN SOLUTION
        H = relu(self.hidden(X))  # (B, Hd)
        return self.output_layer(H)  # (B, Q)
        # END SOLUTION

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.num_outputs)

    def get_config(self):
        return {
            **super().get_config(),
            "num_hiddens": self.num_hiddens,
            "num_outputs": self.num_outputs,
        }


def softmax_cross_entropy(logits, labels):
    """Cross-entropy of `softmax(logits)` against integer labels, per example.

    Computed from the logits with the log-sum-exp trick, so it stays finite
    for logits of any size (1e4 included).

    Args:
        logits: `(B, Q)` unnormalised scores.
        labels: `(B,)` integers in `[0, Q)`.

    Returns:
        `(B,)` losses `logsumexp(logits_i) - logits_i[labels_i]`, each >= 0
        (take the mean for a batch loss).
    """
    logits = ops.convert_to_tensor(logits)
    labels = ops.convert_to_tensor(labels)
    if len(logits.shape) != 2:
        raise ValueError(
            f"`logits` must have shape (B, Q), got shape {tuple(logits.shape)}"
        )
    if len(labels.shape) != 1:
        raise ValueError(
            f"`labels` must have shape (B,), got shape {tuple(labels.shape)}"
        )
    labels = ops.cast(labels, "int32")
    # TODO(l01): loss_i = logsumexp(o_i) - o_i[y_i], the module docstring's
    #   trick: logits o (B, Q) and labels y (B,) int32 -> (B,) losses, each >=
    #   0. Key intermediates: m_i = max_j o_ij (B, 1); the shifted logits o - m
    #   (B, Q), whose exponentials all lie in (0, 1]; log_probs = (o - m) -
    #   logsumexp(o - m) (B, Q). It must stay finite for logits of 1e4, so no
    #   exponential of an unshifted logit. Our solution is about 4 lines.
    #   中文：每行先减去最大的 logit 再算 logsumexp，
    #   损失是标签处对数概率的相反数；logits 为 1e4 时也必须是有限值。
    # BEGIN SOLUTION
    shifted = logits - ops.max(logits, axis=-1, keepdims=True)  # (B, Q)
    log_norm = ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
    log_probs = shifted - log_norm  # (B, Q)
    picked = ops.take_along_axis(log_probs, labels[:, None], axis=-1)
    return -picked[:, 0]  # (B,)
    # END SOLUTION
