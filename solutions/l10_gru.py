"""Lesson 10: gated recurrent units (门控循环单元, GRU).

A plain RNN overwrites its hidden state at every step, so information from
far back fades (or explodes) through a long chain of matrix products. A GRU
adds two learned gates that decide, per unit and per step, how much of the
old state to keep and how much of it to use when proposing a new one:

    reset gate  (重置门):   R_t = sigmoid(X_t W_xr + H_{t-1} W_hr + b_r)
    update gate (更新门):   Z_t = sigmoid(X_t W_xz + H_{t-1} W_hz + b_z)
    candidate state (候选隐状态):
                  H~_t = tanh(X_t W_xh + (R_t * H_{t-1}) W_hh + b_h)
    new state:    H_t  = Z_t * H_{t-1} + (1 - Z_t) * H~_t

`*` is the elementwise product. Z_t near 1 copies the old state forward
(long-term memory); R_t near 0 makes the candidate ignore the past (a reset).

Convention (fixed by the graders): the reset gate multiplies H_{t-1} BEFORE
the recurrent matmul, as in the equations above. That is Keras's
`keras.layers.GRU(reset_after=False)`; the Keras default `reset_after=True`
computes `R_t * (H_{t-1} W_hh)` instead (the cuDNN form).

Weights, laid out as in Keras so they can be copied both ways:
    kernel           (D, 3U)  columns [W_xz | W_xr | W_xh]
    recurrent_kernel (U, 3U)  columns [W_hz | W_hr | W_hh]
    bias             (3U,)    [b_z | b_r | b_h]
Blocks are in the order [z | r | h]: update gate first.

Reference: Cho et al. 2014; d2l 9.1 (10.2).
"""

import keras
from keras import ops


class GRUCell(keras.layers.Layer):
    """One GRU time step; wrap it in `keras.layers.RNN` to run a sequence.

    Args:
        units: int, U, the size of the hidden state.

    Call arguments:
        inputs: `(B, D)`, the input at step t.
        states: `(B, U)`, the hidden state at step t-1, or a list holding it
            (that is what `keras.layers.RNN` passes).
        training: unused (no dropout); accepted so `keras.layers.RNN` can
            pass it.

    Returns:
        `(h_new, [h_new])`, each `(B, U)`: the output and the next state.

    Example:
        >>> rnn = keras.layers.RNN(GRUCell(4), return_sequences=True)
        >>> tuple(rnn(ops.zeros((2, 3, 5))).shape)  # (B, T, U)
        (2, 3, 4)
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        if int(units) != units or units <= 0:
            raise ValueError(f"`units` must be a positive int, got {units!r}")
        self.units = int(units)
        # What keras.layers.RNN reads to create the initial state and the
        # output: one state tensor of size U, and an output of size U.
        self.state_size = self.units
        self.output_size = self.units

    def build(self, input_shape):
        d = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(d, 3 * self.units),
            name="kernel",
            initializer="glorot_uniform",
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, 3 * self.units),
            name="recurrent_kernel",
            initializer="orthogonal",
        )
        self.bias = self.add_weight(
            shape=(3 * self.units,), name="bias", initializer="zeros"
        )

    def call(self, inputs, states, training=None):
        h = states[0] if isinstance(states, (list, tuple)) else states
        # TODO(l10): one step of the module docstring's equations, with X_t =
        #   inputs (B, D) and H_{t-1} = h (B, U): the gates R_t and Z_t = σ(...)
        #   (σ the logistic function), the candidate H~_t = tanh(X_t W_xh + (R_t
        #   * H_{t-1}) W_hh + b_h), and H_t = Z_t * H_{t-1} + (1 - Z_t) * H~_t.
        #   The weights are laid out as the docstring says, update gate first:
        #   self.kernel (D, 3U) = [W_xz | W_xr | W_xh], self.recurrent_kernel
        #   (U, 3U) = [W_hz | W_hr | W_hh], self.bias (3U,) = [b_z | b_r | b_h].
        #   The reset gate scales H_{t-1} before its product with W_hh (Keras's
        #   reset_after=False). Both gates and the candidate are (B, U): inputs
        #   (B, D), h (B, U) -> (h_new, [h_new]), h_new (B, U) = H_t. Our
        #   solution is about 8 lines.
        #   中文：重置门、更新门和候选隐状态（重置门在矩阵乘法之前），
        #   h = z*h_prev + (1-z)*h_cand。
        # BEGIN SOLUTION
        w_z, w_r, w_h = ops.split(self.kernel, 3, axis=-1)  # 3 x (D, U)
        u_z, u_r, u_h = ops.split(self.recurrent_kernel, 3, axis=-1)  # (U, U)
        b_z, b_r, b_h = ops.split(self.bias, 3, axis=-1)  # 3 x (U,)
        z = ops.sigmoid(ops.matmul(inputs, w_z) + ops.matmul(h, u_z) + b_z)
        r = ops.sigmoid(ops.matmul(inputs, w_r) + ops.matmul(h, u_r) + b_r)
        # The reset gate scales the old state before it meets W_hh.
        h_cand = ops.tanh(
            ops.matmul(inputs, w_h) + ops.matmul(r * h, u_h) + b_h
        )
        # z near 1 keeps the old state, z near 0 takes the candidate.
        h_new = z * h + (1.0 - z) * h_cand  # (B, U)
        return h_new, [h_new]
        # END SOLUTION

    def get_config(self):
        return {**super().get_config(), "units": self.units}
