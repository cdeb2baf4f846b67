# ruff: noqa: F821  (appended to a skeleton, whose names it uses)
# Appended to the untouched l10 skeleton by tests/test_attacks_shortcuts.py:
# no grader is touched, but the cell skips the lesson's math. It returns a
# (B, U) state with every weight on the path to it: the sum of the three
# blocks of X W + H U + b, no gate, no reset, no interpolation.


def _gru_call(self, inputs, states, training=None):
    h = states[0] if isinstance(states, (list, tuple)) else states
    mixed = (
        ops.matmul(inputs, self.kernel)
        + ops.matmul(h, self.recurrent_kernel)
        + self.bias
    )
    first, second, third = ops.split(mixed, 3, axis=-1)
    h_new = first + second + third
    return h_new, [h_new]


GRUCell.call = _gru_call
