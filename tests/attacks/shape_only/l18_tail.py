# ruff: noqa: F821  (appended to a skeleton, whose names it uses)
# Appended to the untouched l18 skeleton by tests/test_attacks_shortcuts.py:
# no grader is touched, but the layer skips the lesson's math. It returns a
# (B, T, D) output with every projection on its path and a dropout that
# acts only in training: no heads, no scores, no mask, no softmax.


def _mha_call(
    self,
    queries,
    keys,
    values,
    valid_lens=None,
    training=None,
    return_attention_weights=False,
):
    pooled = ops.mean(self.W_k(keys) * self.W_v(values), axis=1, keepdims=True)
    mixed = self.W_o(self.W_q(queries) + pooled)
    ones = ops.ones_like(mixed)
    output = mixed + self.attention_dropout(ones, training=training) - ones
    b, t, s = ops.shape(queries)[0], ops.shape(queries)[1], ops.shape(keys)[1]
    weights = ops.zeros((b, self.num_heads, t, s), mixed.dtype)
    if return_attention_weights:
        return output, weights
    return output


MultiHeadAttention.call = _mha_call
