"""Float64 references of the CNN lessons (02-04), judge side: convolution,
pooling and batch norm in NumPy; the parameter formulas; an architecture's
layer table and parameter counts from the formulas alone (`simulate`) and
its float64 forward pass (`forward`). Judging a layer table is
`graders.lib.cnn_judge`; the toy images, `graders.lib.data.toy_images`.

Images are channels-last: x (B, H, W, C); kernels (k, k, C_in, C_out) as
Keras stores them. The probe side is `graders.lib.cnn_probes`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graders.lib.fixtures import reference
from graders.lib.messages import say

Row = tuple[str, tuple[int, ...]]
"""One row of a layer table: (layer class name, output shape)."""

# ----------------------------------------------------- float64 references


def _pads(n: int, k: int, s: int, padding: str) -> tuple[int, int, int]:
    """(pad before, pad after, output size) along one axis, as TF does it:
    'valid' takes no padding; 'same' gives ceil(n / s) outputs and puts the
    odd pixel of padding after."""
    if padding == "valid":
        return 0, 0, (n - k) // s + 1
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2, out


def _windows(x, k, s, padding, fill):
    """(B, Ho, Wo, C, k, k) windows of x (B, H, W, C)."""
    top, bottom, ho = _pads(x.shape[1], k, s, padding)
    left, right, wo = _pads(x.shape[2], k, s, padding)
    xp = np.pad(
        x,
        ((0, 0), (top, bottom), (left, right), (0, 0)),
        constant_values=fill,
    )
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))
    return win[:, ::s, ::s][:, :ho, :wo]


@reference
def conv2d(x, kernel, bias=None, strides=1, padding="valid"):
    """Convolution (as Keras computes it: cross-correlation) by im2col.

    x (B, H, W, C), kernel (k, k, C, O), bias (O,) -> (B, Ho, Wo, O).
    """
    x = np.asarray(x, np.float64)
    kernel = np.asarray(kernel, np.float64)
    win = _windows(x, kernel.shape[0], strides, padding, 0.0)
    out = np.einsum("bhwcij,ijco->bhwo", win, kernel, optimize=True)
    return out if bias is None else out + np.asarray(bias, np.float64)


@reference
def max_pool(x, size, strides, padding="valid"):
    """Max pooling; 'same' pads with -inf, so padding never wins."""
    x = np.asarray(x, np.float64)
    return _windows(x, size, strides, padding, -np.inf).max(axis=(-2, -1))


@reference
def avg_pool(x, size, strides):
    """Average pooling, 'valid' padding."""
    x = np.asarray(x, np.float64)
    return _windows(x, size, strides, "valid", 0.0).mean(axis=(-2, -1))


@reference
def global_avg_pool(x):
    """x (B, H, W, C) -> (B, C): the mean over the image."""
    return np.asarray(x, np.float64).mean(axis=(1, 2))


@reference
def relu(x):
    """max(x, 0), elementwise (any shape)."""
    return np.maximum(x, 0.0)


@reference
def dense(x, kernel, bias):
    """x (B, D) @ kernel (D, U) + bias (U,) -> (B, U)."""
    return np.asarray(x, np.float64) @ kernel + bias


BN_EPSILON = 1e-3
"""Keras's BatchNormalization default epsilon."""


@reference
def batch_norm(x, gamma, beta, mean, var, training=False, eps=BN_EPSILON):
    """Batch norm over the channels (last) axis.

    training=False: with the moving statistics `mean`, `var`.
    training=True: with the batch's own mean and (biased) variance over
    (B, H, W), as Keras does in training; `mean`, `var` are then unused.
    """
    x = np.asarray(x, np.float64)
    if training:
        mean = x.mean(axis=(0, 1, 2))
        var = x.var(axis=(0, 1, 2))
    return (x - mean) / np.sqrt(np.asarray(var) + eps) * gamma + beta


# ---------------------------------------------------- parameter formulas


@reference
def conv_params(k: int, c_in: int, c_out: int) -> int:
    """k*k*c_in*c_out weights + c_out biases."""
    return k * k * c_in * c_out + c_out


@reference
def dense_params(d_in: int, d_out: int) -> int:
    """d_in*d_out weights + d_out biases."""
    return d_in * d_out + d_out


@reference
def bn_params(c: int) -> tuple[int, int]:
    """(trainable gamma, beta; non-trainable moving mean, variance)."""
    return 2 * c, 2 * c


# ------------------------------------------------ closed-form architecture

Spec = Sequence[tuple]
"""An architecture as a list of items, each a tuple:

    ("conv", filters, k, strides, padding, activation)
    ("pool", "max" | "avg", k, strides, padding)
    ("bn",) ("relu",) ("flatten",) ("dropout",) ("gap",)
    ("dense", units, activation)
    ("seq", spec)                          one row "Sequential"
    ("block", name, fn)                    fn(shape) -> (shape, trainable,
                                           non_trainable): a custom layer
"""


@reference
def simulate(
    spec: Spec, input_shape: tuple[int, ...]
) -> tuple[list[Row], int, int]:
    """The layer table and the (trainable, non-trainable) parameter counts
    of `spec` on `input_shape`, from the formulas alone (no Keras).

    Rows follow `table_rows`: a fused relu adds a ReLU row. A new kind of
    item is one more function in `_STEPS`.
    """
    shape = tuple(input_shape)
    rows: list[Row] = []
    trainable = non_trainable = 0
    for item in spec:
        step = _STEPS.get(item[0])
        if step is None:
            raise ValueError(f"unknown spec item {item!r}")
        shape, new_rows, t, n = step(item, shape)
        rows += new_rows
        trainable, non_trainable = trainable + t, non_trainable + n
    return rows, trainable, non_trainable


Step = tuple[tuple[int, ...], list[Row], int, int]
"""What one spec item does: (output shape, its rows, trainable and
non-trainable parameter counts)."""


def _spatial(shape: tuple[int, ...], k: int, s: int, padding: str):
    """(H_out, W_out) of a k x k window with stride s on (B, H, W, C)."""
    return _pads(shape[1], k, s, padding)[2], _pads(shape[2], k, s, padding)[2]


def _with_relu(name: str, shape: tuple[int, ...], activation) -> list[Row]:
    rows = [(name, shape)]
    return rows + [("ReLU", shape)] if activation == "relu" else rows


def _conv_step(item: tuple, shape: tuple[int, ...]) -> Step:
    _, filters, k, s, padding, activation = item
    out = (shape[0], *_spatial(shape, k, s, padding), filters)
    rows = _with_relu("Conv2D", out, activation)
    return out, rows, conv_params(k, shape[3], filters), 0


def _pool_step(item: tuple, shape: tuple[int, ...]) -> Step:
    _, how, k, s, padding = item
    h, w = _spatial(shape, k, s, padding)
    if h <= 0 or w <= 0:
        raise ValueError(f"pooling {k}/{s} on {shape}")
    out = (shape[0], h, w, shape[3])
    name = "MaxPooling2D" if how == "max" else "AveragePooling2D"
    return out, [(name, out)], 0, 0


def _bn_step(item: tuple, shape: tuple[int, ...]) -> Step:
    return (shape, [("BatchNormalization", shape)], *bn_params(shape[-1]))


def _named_step(name: str):
    """An item that keeps the shape and has no parameters (relu, dropout)."""

    def step(item: tuple, shape: tuple[int, ...]) -> Step:
        return shape, [(name, shape)], 0, 0

    return step


def _flatten_step(item: tuple, shape: tuple[int, ...]) -> Step:
    out = (shape[0], int(np.prod(shape[1:])))
    return out, [("Flatten", out)], 0, 0


def _gap_step(item: tuple, shape: tuple[int, ...]) -> Step:
    out = (shape[0], shape[-1])
    return out, [("GlobalAveragePooling2D", out)], 0, 0


def _dense_step(item: tuple, shape: tuple[int, ...]) -> Step:
    _, units, activation = item
    out = (shape[0], units)
    rows = _with_relu("Dense", out, activation)
    return out, rows, dense_params(shape[-1], units), 0


def _seq_step(item: tuple, shape: tuple[int, ...]) -> Step:
    inner, t, n = simulate(item[1], shape)
    out = inner[-1][1] if inner else tuple(shape)
    return out, [("Sequential", out)], t, n


def _block_step(item: tuple, shape: tuple[int, ...]) -> Step:
    _, name, fn = item
    out, t, n = fn(shape)
    return tuple(out), [(name, tuple(out))], t, n


_STEPS = {
    "conv": _conv_step,
    "pool": _pool_step,
    "bn": _bn_step,
    "relu": _named_step("ReLU"),
    "flatten": _flatten_step,
    "dropout": _named_step("Dropout"),
    "gap": _gap_step,
    "dense": _dense_step,
    "seq": _seq_step,
    "block": _block_step,
}


@reference
def forward(
    spec: Spec, x: np.ndarray, weights: Sequence[np.ndarray]
) -> np.ndarray:
    """Run `spec` on x in float64 with `weights` in Keras's order (conv and
    dense: kernel, bias; batch norm: gamma, beta, moving mean, moving
    variance, used in inference mode). Dropout is the identity (inference).

    Raises:
        ValueError: a weight of the wrong shape, or too few or too many.
    """
    stream = iter(weights)

    def take(shape, role="kernel"):
        try:
            value = np.asarray(next(stream), np.float64)
        except StopIteration:
            raise ValueError(say("cnn_references.fewer_weights")) from None
        if value.shape != tuple(shape):
            raise ValueError(
                say(
                    "cnn_references.weight_shape",
                    got=value.shape,
                    expected=tuple(shape),
                )
            )
        return value

    out = _run(spec, np.asarray(x, np.float64), take)
    if next(stream, None) is not None:
        raise ValueError(say("cnn_references.more_weights"))
    return out


@reference
def init_weights(
    spec: Spec, input_shape: tuple[int, ...], rng: np.random.Generator
) -> list[np.ndarray]:
    """Random float32 weights for `spec` in `forward`'s order: He-scaled
    kernels, nonzero biases (so a dropped bias shows), batch-norm
    statistics away from 0 and 1 (so a skipped batch norm shows)."""
    made: list[np.ndarray] = []

    def take(shape, role="kernel"):
        value = random_weight(shape, role, rng)
        made.append(value)
        return value.astype(np.float64)

    _run(spec, np.zeros(input_shape), take)
    return made


@reference
def random_weight(
    shape: tuple[int, ...], role: str, rng: np.random.Generator
) -> np.ndarray:
    """One float32 weight: `role` is kernel, bias, gamma, beta, mean or
    var."""
    if role == "kernel":
        fan_in = int(np.prod(shape[:-1]))
        value = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
    elif role in ("gamma", "var"):
        value = rng.uniform(0.5, 1.5, shape)
    else:
        value = rng.standard_normal(shape) * 0.2
    return np.asarray(value, np.float32)


BN_ROLES = ("gamma", "beta", "mean", "var")


def _run(spec, x, take):
    for item in spec:
        kind = item[0]
        if kind == "conv":
            _, filters, k, s, padding, activation = item
            kernel = take((k, k, x.shape[-1], filters))
            x = conv2d(x, kernel, take((filters,), "bias"), s, padding)
            x = relu(x) if activation == "relu" else x
        elif kind == "pool":
            _, how, k, s, padding = item
            x = (
                max_pool(x, k, s, padding)
                if how == "max"
                else avg_pool(x, k, s)
            )
        elif kind == "bn":
            c = x.shape[-1]
            x = batch_norm(x, *(take((c,), role) for role in BN_ROLES))
        elif kind == "relu":
            x = relu(x)
        elif kind == "flatten":
            x = x.reshape(len(x), -1)
        elif kind == "dropout":
            pass
        elif kind == "gap":
            x = global_avg_pool(x)
        elif kind == "dense":
            _, units, activation = item
            x = dense(x, take((x.shape[-1], units)), take((units,), "bias"))
            x = relu(x) if activation == "relu" else x
        elif kind == "seq":
            x = _run(item[1], x, take)
        else:
            raise ValueError(f"forward() cannot run {item[0]!r} items")
    return x
