"""What the student's simple recurrent cell costs: the same LSTM and GRU
with backpropagation through time written out by hand.

A cell inside `keras.layers.RNN` (lessons 10 and 11, and Keras's own
`LSTM` / `GRU` on CPU) is differentiated by TensorFlow one step at a time.
Two things make that slow on CPU at d2l's sizes (batch 32, 256 hidden):

* the gradient of `h @ U` with respect to `h` is `MatMul(dpre, U,
  transpose_b=True)`, and Eigen's product with a transposed right operand
  took 2.5x the time of the same product with `U.T` stored (50 vs 20 ms
  for 35 steps of `(32, 1024) x (1024, 256)`, one thread);
* the gradient of `U` is summed step by step: 35 products with an inner
  size of 32 (the batch), each writing a full `(U, 4U)` matrix that an
  `AddN` then adds up.

Here the forward pass is a `tf.scan` that keeps the gates, and the
backward pass a reverse `tf.scan` that multiplies by a `U.T` transposed
once; the weight gradients are one product each over all steps at once
(inner size B * T). The cell's weights (Keras's layout) are used as they
are, so `Fused(cell)` trains the same parameters as `RNN(cell)`;
`tests/test_benchmarks.py` checks outputs and gradients against it.

This is benchmark code, not course code: a student writes the cell, and
`keras.layers.RNN` runs it. benchmarks/README.md gives the figures.
"""

from __future__ import annotations

import keras
import tensorflow as tf


def _time_major(x):
    """`(B, T, D)` -> `(T, B, D)` and back."""
    return tf.transpose(x, [1, 0, 2])


def _input_projection(x, kernel, bias):
    """`(B, T, D)` inputs -> `(T, B, G)` input part of every gate, all
    steps in one product; also the flat `(T * B, D)` inputs."""
    xs = _time_major(x)
    steps, batch = tf.shape(xs)[0], tf.shape(xs)[1]
    flat = tf.reshape(xs, (-1, xs.shape[-1]))
    z = tf.matmul(flat, kernel) + bias
    return tf.reshape(z, (steps, batch, kernel.shape[-1])), flat


def _weight_grads(flat_x, kernel, dpre):
    """Gradients of the input projection from `(T, B, G)` dpre: the
    kernel's and bias's over all steps at once, and the inputs'."""
    steps, batch = tf.shape(dpre)[0], tf.shape(dpre)[1]
    d = tf.reshape(dpre, (-1, dpre.shape[-1]))  # (T * B, G)
    d_kernel = tf.matmul(flat_x, d, transpose_a=True)  # (D, G)
    d_bias = tf.reduce_sum(d, axis=0)
    dx = tf.matmul(d, tf.transpose(kernel))  # (T * B, D)
    dx = _time_major(tf.reshape(dx, (steps, batch, kernel.shape[0])))
    return dx, d_kernel, d_bias, d


def _shift(seq, first):
    """`(T, B, U)` -> the same one step later, `first` at t = 0."""
    return tf.concat([first[None], seq[:-1]], axis=0)


@tf.custom_gradient
def lstm_sequence(x, kernel, recurrent_kernel, bias):
    """An LSTM over a sequence from zero state, in lesson 11's layout.

    Args:
        x: `(B, T, D)`.
        kernel: `(D, 4U)`, recurrent_kernel: `(U, 4U)`, bias: `(4U,)`,
            blocks [i | f | c | o].

    Returns:
        `(B, T, U)`, the hidden state at every step.
    """
    units = recurrent_kernel.shape[0]
    z, flat_x = _input_projection(x, kernel, bias)
    zero = tf.zeros((tf.shape(x)[0], units), x.dtype)

    def step(carry, z_t):
        h, c = carry[0], carry[1]
        pre = z_t + tf.matmul(h, recurrent_kernel)
        i, f, g, o = tf.split(pre, 4, axis=-1)
        i, f, g, o = tf.sigmoid(i), tf.sigmoid(f), tf.tanh(g), tf.sigmoid(o)
        c = f * c + i * g
        tanh_c = tf.tanh(c)
        return (o * tanh_c, c, i, f, g, o, tanh_c)

    hs, cs, i, f, g, o, tanh_c = tf.scan(step, z, initializer=(zero,) * 7)

    def grad(d_out):
        u_t = tf.transpose(recurrent_kernel)  # (4U, U), once

        def back(carry, e):
            dh_next, dc_next = carry[0], carry[1]
            dh_out, i, f, g, o, tanh_c, c_prev = e
            dh = dh_out + dh_next
            dc = dc_next + dh * o * (1.0 - tanh_c * tanh_c)
            dpre = tf.concat(
                [
                    dc * g * i * (1.0 - i),
                    dc * c_prev * f * (1.0 - f),
                    dc * i * (1.0 - g * g),
                    dh * tanh_c * o * (1.0 - o),
                ],
                axis=-1,
            )
            return (tf.matmul(dpre, u_t), dc * f, dpre)

        elems = (_time_major(d_out), i, f, g, o, tanh_c, _shift(cs, zero))
        init = (zero, zero, tf.zeros_like(z[0]))
        dpre = tf.scan(back, elems, initializer=init, reverse=True)[2]
        dx, d_kernel, d_bias, d = _weight_grads(flat_x, kernel, dpre)
        h_prev = tf.reshape(_shift(hs, zero), (-1, units))
        d_recurrent = tf.matmul(h_prev, d, transpose_a=True)  # (U, 4U)
        return dx, d_kernel, d_recurrent, d_bias

    return _time_major(hs), grad


@tf.custom_gradient
def gru_sequence(x, kernel, recurrent_kernel, bias):
    """A GRU (reset before the matmul) from zero state, lesson 10's layout.

    Args:
        x: `(B, T, D)`.
        kernel: `(D, 3U)`, recurrent_kernel: `(U, 3U)`, bias: `(3U,)`,
            blocks [z | r | h].

    Returns:
        `(B, T, U)`, the hidden state at every step.
    """
    units = recurrent_kernel.shape[0]
    u_zr = recurrent_kernel[:, : 2 * units]  # (U, 2U), sliced once
    u_h = recurrent_kernel[:, 2 * units :]  # (U, U)
    z_in, flat_x = _input_projection(x, kernel, bias)
    zero = tf.zeros((tf.shape(x)[0], units), x.dtype)

    def step(carry, z_t):
        h = carry[0]
        zx, rx, hx = tf.split(z_t, 3, axis=-1)
        gates = tf.sigmoid(tf.concat([zx, rx], -1) + tf.matmul(h, u_zr))
        z, r = tf.split(gates, 2, axis=-1)
        cand = tf.tanh(hx + tf.matmul(r * h, u_h))
        return (z * h + (1.0 - z) * cand, z, r, cand)

    hs, z, r, cand = tf.scan(step, z_in, initializer=(zero,) * 4)
    h_prev = _shift(hs, zero)

    def grad(d_out):
        u_zr_t, u_h_t = tf.transpose(u_zr), tf.transpose(u_h)  # once

        def back(carry, e):
            dh_out, z, r, cand, h_prev = e
            dh = dh_out + carry[0]
            d_cand = dh * (1.0 - z) * (1.0 - cand * cand)  # candidate's pre
            d_rh = tf.matmul(d_cand, u_h_t)  # (B, U), into r * h_prev
            d_zr = tf.concat(
                [
                    dh * (h_prev - cand) * z * (1.0 - z),
                    d_rh * h_prev * r * (1.0 - r),
                ],
                axis=-1,
            )
            dh_prev = dh * z + d_rh * r + tf.matmul(d_zr, u_zr_t)
            return (dh_prev, tf.concat([d_zr, d_cand], axis=-1))

        elems = (_time_major(d_out), z, r, cand, h_prev)
        init = (zero, tf.zeros_like(z_in[0]))
        dpre = tf.scan(back, elems, initializer=init, reverse=True)[1]
        dx, d_kernel, d_bias, d = _weight_grads(flat_x, kernel, dpre)
        flat_h = tf.reshape(h_prev, (-1, units))
        flat_rh = tf.reshape(r * h_prev, (-1, units))
        d_recurrent = tf.concat(
            [
                tf.matmul(flat_h, d[:, : 2 * units], transpose_a=True),
                tf.matmul(flat_rh, d[:, 2 * units :], transpose_a=True),
            ],
            axis=-1,
        )  # (U, 3U)
        return dx, d_kernel, d_recurrent, d_bias

    return _time_major(hs), grad


class Fused(keras.layers.Layer):
    """`RNN(cell, return_sequences=True)` from zero state, with the BPTT
    above; `cell` is lesson 10's `GRUCell` or lesson 11's `LSTMCell`, whose
    weights it trains.

    Call arguments:
        inputs: `(B, T, D)`.

    Returns:
        `(B, T, U)`.
    """

    def __init__(self, cell: keras.layers.Layer, **kwargs):
        super().__init__(**kwargs)
        kinds = {"GRUCell": gru_sequence, "LSTMCell": lstm_sequence}
        if type(cell).__name__ not in kinds:
            raise ValueError(
                f"`cell` must be a GRUCell or an LSTMCell, got {cell!r}"
            )
        self.cell = cell
        self._sequence = kinds[type(cell).__name__]

    def build(self, input_shape):
        if not self.cell.built:  # a deserialised cell comes built
            self.cell.build((input_shape[0], input_shape[-1]))

    def call(self, inputs):
        cell = self.cell
        return self._sequence(
            inputs,
            cell.kernel.value,
            cell.recurrent_kernel.value,
            cell.bias.value,
        )

    def get_config(self):
        return {
            **super().get_config(),
            "cell": keras.saving.serialize_keras_object(self.cell),
        }

    @classmethod
    def from_config(cls, config):
        cell = keras.saving.deserialize_keras_object(config.pop("cell"))
        return cls(cell, **config)
