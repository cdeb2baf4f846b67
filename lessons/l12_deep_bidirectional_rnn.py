# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l12`.
# (Generated from solutions/l12_deep_bidirectional_rnn.py by `m2t make-lessons`.)
"""Lesson 12: deep and bidirectional RNNs (深度循环神经网络, 双向循环神经网络).

Deep (stacked) RNN. L recurrent layers on top of each other; layer l reads
the WHOLE output sequence of layer l-1 (its hidden state at every step):

    H_t^(0) = X_t
    H_t^(l) = f_l(H_t^(l-1), H_{t-1}^(l))        l = 1, ..., L
    output: the top layer's sequence H_1^(L), ..., H_T^(L)

Each layer has its own time recurrence; lower layers tend to follow short
term dynamics and higher layers slower ones. The last state of every layer
is returned too: a seq2seq encoder hands all L of them to its decoder.

Bidirectional RNN. Two independent RNNs read the same sequence, one from
left to right and one from right to left, and their states at each position
are concatenated:

    forward:   H->_t = f(X_t, H->_{t-1})      reads X_1 ... X_t
    backward:  H<-_t = g(X_t, H<-_{t+1})      reads X_T ... X_t
    H_t = [H->_t, H<-_t]                      (B, T, 2U)

The backward RNN is an ordinary RNN run on the reversed sequence; its
outputs come out reversed and must be flipped back so that position t holds
H<-_t (the state after reading X_T ... X_t), aligned with H->_t.

Warning: H_t depends on the future inputs X_{t+1} ... X_T. A bidirectional
layer is for encoding a whole sequence that is known in advance (tagging,
filling a blank, a translation encoder). It cannot predict the next token:
at test time the future is not there to read, and a model trained with it
learns to copy from it (d2l-zh, 双向循环神经网络:
在训练期间，我们能够利用过去和未来的数据...
而在测试期间，我们只有过去的数据，因此精度将会很差). It is also slow:
the backward pass cannot start before the whole sequence is known.

Both layers use Keras's own recurrent layers inside (`SimpleRNN`, `GRU`,
`LSTM` with `return_sequences=True, return_state=True`); the idea here is
how they are wired.

Reference: Graves et al. 2013; Schuster & Paliwal 1997; d2l 9.3, 9.4.
"""

import keras
from keras import ops

CELLS = {
    "rnn": keras.layers.SimpleRNN,
    "gru": keras.layers.GRU,
    "lstm": keras.layers.LSTM,
}
"""The recurrent layer each `cell` name builds. A layer's state is one
`(B, U)` tensor for "rnn" and "gru", and a list `[h, c]` for "lstm"."""


def _check_positive_int(name: str, value) -> None:
    if int(value) != value or value <= 0:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def _check_cell(cell: str) -> None:
    if cell not in CELLS:
        raise ValueError(f"`cell` must be one of {sorted(CELLS)}, got {cell!r}")


def _recurrent_layer(cell: str, units: int, name: str, dtype_policy):
    return CELLS[cell](
        units,
        return_sequences=True,
        return_state=True,
        name=name,
        dtype=dtype_policy,
    )


def split_results(results):
    """A Keras recurrent layer's `[outputs, *states]` -> `(outputs, state)`.

    `state` is the one state tensor `(B, U)` of "rnn" and "gru" layers, or
    the list `[h, c]` of an "lstm" layer.
    """
    outputs, *state = results
    return outputs, state[0] if len(state) == 1 else state


class StackedRNN(keras.layers.Layer):
    """A deep RNN: `num_layers` recurrent layers, each reading the full
    output sequence of the one below.

    Args:
        num_layers: int, L.
        num_hiddens: int, U, the hidden size of every layer.
        cell: "rnn" (SimpleRNN), "gru" or "lstm".
        dropout: float in [0, 1), dropout on the sequence passed from one
            layer to the next (not on the top layer's output), as d2l's
            `nn.GRU(dropout=...)`.

    Call arguments:
        inputs: `(B, T, D)`.
        initial_state: None (zeros), or a list of L states, one per layer
            (each `(B, U)`, or `[h, c]` for "lstm").
        mask: optional `(B, T)` boolean, True at real (not padded) steps.
        training: bool, dropout is active only when True.

    Returns:
        `(outputs, states)`: outputs `(B, T, U)` is the top layer's sequence;
        states is a list of L last states, bottom layer first.
    """

    def __init__(
        self,
        num_layers: int,
        num_hiddens: int,
        cell: str = "gru",
        dropout: float = 0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        # A (B, T) mask passes on to `outputs`; the states take none.
        self.supports_masking = True
        _check_positive_int("num_layers", num_layers)
        _check_positive_int("num_hiddens", num_hiddens)
        _check_cell(cell)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")
        self.num_layers = int(num_layers)
        self.num_hiddens = int(num_hiddens)
        self.cell = cell
        self.dropout = dropout
        self.rnn_layers = [
            _recurrent_layer(cell, num_hiddens, f"layer_{i}", self.dtype_policy)
            for i in range(num_layers)
        ]
        self.inter_layer_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy
        )

    def build(self, inputs_shape, initial_state_shape=None):
        shape = tuple(inputs_shape)
        for layer in self.rnn_layers:
            layer.build(shape)
            shape = shape[:-1] + (self.num_hiddens,)  # what the next one reads

    def call(self, inputs, initial_state=None, mask=None, training=None):
        if initial_state is not None and len(initial_state) != self.num_layers:
            raise ValueError(
                f"`initial_state` must hold one state per layer "
                f"({self.num_layers}), got {len(initial_state)}"
            )
        # TODO(l12): the stack of the module docstring, inputs (B, T, D) ->
        #   (B, T, U) outputs: H^(0) = inputs, and H^(l) is layer l of
        #   self.rnn_layers (bottom first) run over the whole sequence
        #   H^(l-1). Layer i starts from
        #   initial_state[i] (zeros when initial_state is None) and sees
        #   mask (B, T) and training; split_results turns its result into
        #   (outputs (B, T, U), state). The sequence passed from one layer
        #   to the next goes through self.inter_layer_dropout (training
        #   only). Return (H^(L) (B, T, U), the list of the L last states,
        #   bottom layer first). Our solution is about 9 lines.
        #   中文：每一层读入下一层在每个时间步的隐状态序列，
        #   并收集每一层最后的隐状态。
        raise NotImplementedError("l12: StackedRNN.call")

    def get_config(self):
        return {
            **super().get_config(),
            "num_layers": self.num_layers,
            "num_hiddens": self.num_hiddens,
            "cell": self.cell,
            "dropout": self.dropout,
        }


class BidirectionalRNN(keras.layers.Layer):
    """A forward and a backward RNN over the same sequence, concatenated.

    Args:
        num_hiddens: int, U, the hidden size of each direction.
        cell: "rnn" (SimpleRNN), "gru" or "lstm".

    Call arguments:
        inputs: `(B, T, D)`.
        initial_state: None (zeros), or `[forward_state, backward_state]`,
            where each RNN starts (each `(B, U)`, or `[h, c]` for "lstm").
        mask: optional `(B, T)` boolean, True at real (not padded) steps.
        training: bool, passed to both RNNs.

    Returns:
        `(outputs, [forward_state, backward_state])`: outputs `(B, T, 2U)`,
        `[H->_t, H<-_t]` at each position t (forward half first, as
        `keras.layers.Bidirectional`); forward_state is the state after
        reading the whole sequence left to right, backward_state after
        reading it right to left (each `(B, U)`, or `[h, c]` for "lstm").
    """

    def __init__(self, num_hiddens: int, cell: str = "gru", **kwargs):
        super().__init__(**kwargs)
        # A (B, T) mask passes on to `outputs`; the states take none.
        self.supports_masking = True
        _check_positive_int("num_hiddens", num_hiddens)
        _check_cell(cell)
        self.num_hiddens = int(num_hiddens)
        self.cell = cell
        self.forward_rnn = _recurrent_layer(
            cell, num_hiddens, "forward", self.dtype_policy
        )
        self.backward_rnn = _recurrent_layer(
            cell, num_hiddens, "backward", self.dtype_policy
        )

    def build(self, inputs_shape, initial_state_shape=None):
        self.forward_rnn.build(inputs_shape)
        self.backward_rnn.build(inputs_shape)

    def call(self, inputs, initial_state=None, mask=None, training=None):
        if initial_state is None:
            initial_state = [None, None]
        elif len(initial_state) != 2:
            raise ValueError(
                "`initial_state` must be [forward_state, backward_state], "
                f"got {len(initial_state)} states"
            )
        # TODO(l12): H_t = [H->_t, H<-_t] of the module docstring, inputs
        #   (B, T, D) -> (B, T, 2U) outputs, the forward half (B, T, U)
        #   first. self.forward_rnn reads the inputs as X_1 ... X_T;
        #   self.backward_rnn reads X_T ... X_1, with the
        #   (B, T) mask, when there is one, reversed in time the same way
        #   (padding met first, and skipped). Position t of the result holds
        #   H<-_t, the state after reading X_T ... X_t, aligned with H->_t.
        #   The forward RNN starts from initial_state[0], the backward one
        #   from initial_state[1] (None: zeros).
        #   Both RNNs see mask and training; split_results gives (outputs
        #   (B, T, U), state) for each. Return (outputs (B, T, 2U),
        #   [forward_state, backward_state]). Our solution is about 10 lines.
        #   中文：反向网络读翻转后的序列，输出再翻转回来；
        #   按 [正向, 反向] 在特征轴上连结。
        raise NotImplementedError("l12: BidirectionalRNN.call")

    def get_config(self):
        return {
            **super().get_config(),
            "num_hiddens": self.num_hiddens,
            "cell": self.cell,
        }
