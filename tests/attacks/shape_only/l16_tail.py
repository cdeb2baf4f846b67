# ruff: noqa: F821  (appended to a skeleton, whose names it uses)
# Appended to the untouched l16 skeleton by tests/test_attacks_facts.py: no
# grader is touched, but the layers skip the lesson's math. They return
# outputs of the right shape, with a dropout that acts only in training and
# (additive) every weight on the path to the output: no tanh, no scale, no
# mask, no softmax.


def _dot_call(
    self,
    queries,
    keys,
    values,
    valid_lens=None,
    training=None,
    return_attention_weights=False,
):
    ones = ops.ones_like(queries[..., :1]) * ops.ones_like(values[:, :1, :])
    output = self.attention_dropout(ones, training=training) - ones
    weights = ops.zeros_like(ops.matmul(queries, ops.swapaxes(keys, -1, -2)))
    if return_attention_weights:
        return output, weights
    return output


def _additive_call(
    self,
    queries,
    keys,
    values,
    valid_lens=None,
    training=None,
    return_attention_weights=False,
):
    features = ops.expand_dims(self.W_q(queries), 2) + ops.expand_dims(
        self.W_k(keys), 1
    )
    weights = ops.squeeze(self.w_v(features), -1)
    output = ops.matmul(
        self.attention_dropout(weights, training=training), values
    )
    if return_attention_weights:
        return output, weights
    return output


DotProductAttention.call = _dot_call
AdditiveAttention.call = _additive_call
