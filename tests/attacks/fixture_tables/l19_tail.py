# ruff: noqa: F821  (appended to a skeleton, whose names it uses)
# Appended to the untouched l19 skeleton by tests/test_attacks_shortcuts.py,
# after `_TABLES = {(rows, depth): table}`: the positional-encoding tables
# the student edition ships as fixtures. No formula: the table is looked up
# by (length, depth), and the rotation M(delta) is read off row |delta| of
# a table (its sines and cosines). The layer adds the table, as it should.
import numpy as _np


def _table(max_len, depth):
    for (rows, d), table in sorted(_TABLES.items(), key=lambda kv: kv[0]):
        if d == depth and rows >= max_len:
            return _np.asarray(table, _np.float64)[:max_len]
    return _np.zeros((max_len, depth))


def positional_encoding_table(max_len, num_hiddens, dtype="float32"):
    return _np.asarray(_table(max_len, num_hiddens), dtype)


def relative_shift(delta, num_hiddens, dtype="float32"):
    row = _table(abs(delta) + 1, num_hiddens)[abs(delta)]
    M = _np.zeros((num_hiddens, num_hiddens))
    for j in range(num_hiddens // 2):
        s, c = row[2 * j] * (1 if delta >= 0 else -1), row[2 * j + 1]
        M[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[c, -s], [s, c]]
    return _np.asarray(M, dtype)


def _call(self, X, training=None):
    T = ops.shape(X)[1]
    return self.encoding_dropout(X + self.P[:T], training=training)


PositionalEncoding.call = _call
