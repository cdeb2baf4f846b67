"""Lesson 11: long short-term memory (长短期记忆网络, LSTM).

An LSTM keeps two states: the hidden state H_t (short-term, what the cell
shows the next layer) and the memory cell C_t (记忆元, long-term). Three
gates decide what enters, stays in and leaves the memory:

    input gate  (输入门):  I_t = sigmoid(X_t W_xi + H_{t-1} W_hi + b_i)
    forget gate (遗忘门):  F_t = sigmoid(X_t W_xf + H_{t-1} W_hf + b_f)
    candidate memory (候选记忆元):
                           C~_t = tanh(X_t W_xc + H_{t-1} W_hc + b_c)
    output gate (输出门):  O_t = sigmoid(X_t W_xo + H_{t-1} W_ho + b_o)

    memory:  C_t = F_t * C_{t-1} + I_t * C~_t
    hidden:  H_t = O_t * tanh(C_t)

`*` is the elementwise product. With F_t = 1 and I_t = 0 the memory passes
through unchanged, however long the sequence: that is how an LSTM keeps
information over many steps. H_t is squashed by tanh, so it stays in
(-1, 1) even when C_t grows.

Weights, laid out as in Keras (`keras.layers.LSTM`) so they can be copied:
    kernel           (D, 4U)  columns [W_xi | W_xf | W_xc | W_xo]
    recurrent_kernel (U, 4U)  columns [W_hi | W_hf | W_hc | W_ho]
    bias             (4U,)    [b_i | b_f | b_c | b_o]
Blocks are in the order [i | f | c | o] (not cs231n's i, f, o, g). The
forget-gate bias starts at 1 (Keras's `unit_forget_bias=True`,
Jozefowicz et al. 2015), so a fresh cell remembers by default.

Reference: Hochreiter & Schmidhuber 1997; d2l 9.2 (10.1).
"""

import keras
from keras import ops


class LSTMCell(keras.layers.Layer):
    """One LSTM time step; wrap it in `keras.layers.RNN` to run a sequence.

    Args:
        units: int, U, the size of the hidden state and of the memory.

    Call arguments:
        inputs: `(B, D)`, the input at step t.
        states: `[h, c]`, each `(B, U)`: hidden state and memory at t-1.
        training: unused (no dropout); accepted so `keras.layers.RNN` can
            pass it.

    Returns:
        `(h_new, [h_new, c_new])`, each `(B, U)`.

    Example:
        >>> rnn = keras.layers.RNN(LSTMCell(4), return_state=True)
        >>> h, h_last, c_last = rnn(ops.zeros((2, 3, 5)))
        >>> tuple(c_last.shape)  # (B, U)
        (2, 4)
    """

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        if int(units) != units or units <= 0:
            raise ValueError(f"`units` must be a positive int, got {units!r}")
        self.units = int(units)
        # Two states of size U each, [h, c]; the output is h.
        self.state_size = [self.units, self.units]
        self.output_size = self.units

    def build(self, input_shape):
        d = input_shape[-1]
        self.kernel = self.add_weight(
            shape=(d, 4 * self.units),
            name="kernel",
            initializer="glorot_uniform",
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, 4 * self.units),
            name="recurrent_kernel",
            initializer="orthogonal",
        )
        self.bias = self.add_weight(
            shape=(4 * self.units,),
            name="bias",
            initializer=self._unit_forget_bias,
        )

    def _unit_forget_bias(self, shape, dtype=None):
        """Bias [b_i | b_f | b_c | b_o] = [0 | 1 | 0 | 0]."""
        u = self.units
        return ops.concatenate(
            [
                ops.zeros((u,), dtype=dtype),
                ops.ones((u,), dtype=dtype),
                ops.zeros((2 * u,), dtype=dtype),
            ]
        )

    def call(self, inputs, states, training=None):
        h, c = states[0], states[1]
        # TODO(l11): one LSTM step, the equations of the module docstring.
        #   Shapes: inputs X_t (B, D), h = H_{t-1} and c = C_{t-1} (B, U) ->
        #   (B, U) for each of h_new = H_t and c_new = C_t.
        #   The four pre-activations together are X_t W_x + H_{t-1} W_h + b,
        #   (B, 4U), with W_x = self.kernel (D, 4U), W_h =
        #   self.recurrent_kernel (U, 4U), b = self.bias (4U,); its column
        #   blocks are [i | f | c | o] in that order, each (B, U) (not
        #   cs231n's i, f, o, g). I_t, F_t, O_t lie in (0, 1), C~_t in (-1, 1).
        #   Assign `c_new` = C_t and `h_new` = H_t, each (B, U), and return
        #   (h_new, [h_new, c_new]): the state order is [h, c], as in Keras.
        #   Our solution is about 8 lines.
        #   中文：按 [i|f|c|o] 切出三个门和候选记忆元；
        #   c = f*c_prev + i*c_cand，h = o 乘以 c 的双曲正切。
        # BEGIN SOLUTION
        pre = (
            ops.matmul(inputs, self.kernel)
            + ops.matmul(h, self.recurrent_kernel)
            + self.bias
        )  # (B, 4U)
        pre_i, pre_f, pre_c, pre_o = ops.split(pre, 4, axis=-1)  # 4 x (B, U)
        i = ops.sigmoid(pre_i)  # how much of the candidate to write
        f = ops.sigmoid(pre_f)  # how much of the old memory to keep
        c_cand = ops.tanh(pre_c)
        o = ops.sigmoid(pre_o)  # how much of the memory to show
        c_new = f * c + i * c_cand  # (B, U)
        h_new = o * ops.tanh(c_new)  # (B, U), in (-1, 1)
        return h_new, [h_new, c_new]
        # END SOLUTION

    def get_config(self):
        return {**super().get_config(), "units": self.units}
