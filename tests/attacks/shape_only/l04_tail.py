# ruff: noqa: F821  (appended to a skeleton, whose names it uses)
# Appended to the untouched l04 skeleton by tests/test_attacks_shortcuts.py:
# no grader is touched, but the blocks skip the lesson's math. They return
# outputs of the right shape with every weight on the path to the output:
# the convolution straight on the inputs, plus the mean of the batch norm's
# output (no normalisation of what the convolution sees, no ReLU, no
# concatenation of the block's own outputs, no average pooling).


def _conv_block_call(self, inputs, training=None):
    normed = self.bn(inputs, training=training)
    return self.conv(inputs) + ops.mean(normed)


def _dense_block_call(self, inputs, training=None):
    x = inputs
    for block in self.conv_blocks:
        y = block(x, training=training)
        x = ops.concatenate([x, ops.zeros_like(y) + ops.mean(y)], axis=-1)
    return x


def _transition_call(self, inputs, training=None):
    normed = self.bn(inputs, training=training)
    y = self.conv(inputs)[:, ::2, ::2, :]
    return y[:, : inputs.shape[1] // 2, : inputs.shape[2] // 2] + ops.mean(
        normed
    )


ConvBlock.call = _conv_block_call
DenseBlock.call = _dense_block_call
TransitionBlock.call = _transition_call
