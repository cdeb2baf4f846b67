# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l04`.
# (Generated from solutions/l04_densenet.py by `m2t make-lessons`.)
"""Lesson 04: DenseNet (稠密连接网络).

ResNet adds a block's input to its output, f(x) = x + g(x). DenseNet
*concatenates* them instead, [x, g(x)] on the channel axis, so every later
layer sees every earlier layer's features:

    x -> [x, f1(x)] -> [x, f1(x), f2([x, f1(x)])] -> ...

Images are channels-last, (B, H, W, C): concatenate on axis -1.

* ConvBlock: batch norm, ReLU, then a 3x3 convolution (padding same) with
  `num_channels` filters: the "pre-activation" order of ResNet v2.
  (B, H, W, C) -> (B, H, W, num_channels).
* DenseBlock(num_convs, num_channels): `num_convs` ConvBlocks; each one's
  output is concatenated onto its input, so the channels grow by
  `num_channels` (the growth rate, 增长率) per block:
  (B, H, W, C) -> (B, H, W, C + num_convs * num_channels).
* TransitionBlock(num_channels) (过渡层): batch norm, ReLU, a 1x1
  convolution to `num_channels` (cuts the channels that the dense blocks
  piled up), then a 2x2 average pooling with stride 2 (halves H and W).

DenseNet (Huang et al. 2017, d2l's version): a stem (7x7 conv, stride 2;
batch norm; ReLU; 3x3 max-pool, stride 2), four dense blocks of 4
convolutions with growth rate 32, a transition block halving the channels
between two dense blocks, then batch norm, ReLU, global average pooling and
a dense layer.

Reference: d2l 7.7 (8.7).
"""

import keras
from keras import ops


def _check_positive(name, value):
    if int(value) != value or value <= 0:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


class ConvBlock(keras.layers.Layer):
    """Batch norm, ReLU, 3x3 convolution (in that order).

    Args:
        num_channels: int, the convolution's filters.

    Call arguments:
        inputs: `(B, H, W, C)`.
        training: bool, batch statistics (True) or moving averages (False).

    Returns:
        `(B, H, W, num_channels)`.

    Sublayers: `bn` (over C channels), `relu`, `conv` (3x3, padding same).
    """

    def __init__(self, num_channels: int, **kwargs):
        super().__init__(**kwargs)
        _check_positive("num_channels", num_channels)
        self.num_channels = num_channels
        layers = keras.layers
        self.bn = layers.BatchNormalization(name="bn", dtype=self.dtype_policy)
        self.relu = layers.ReLU(name="relu", dtype=self.dtype_policy)
        self.conv = layers.Conv2D(
            num_channels,
            3,
            padding="same",
            name="conv",
            dtype=self.dtype_policy,
        )

    def build(self, input_shape):
        self.bn.build(input_shape)
        self.conv.build(input_shape)

    def call(self, inputs, training=None):
        # TODO(l04): the module docstring's pre-activation order:
        #   conv(ReLU(BN(X))), with self.bn (given `training`), self.relu and
        #   self.conv: X (B, H, W, C) -> (B, H, W, num_channels). Return it. Our
        #   solution is 1 line.
        #   中文：预激活的顺序：先批量规范化，再 ReLU，最后卷积。
        raise NotImplementedError("l04: ConvBlock.call")

    def get_config(self):
        return {**super().get_config(), "num_channels": self.num_channels}


class DenseBlock(keras.layers.Layer):
    """`num_convs` ConvBlocks, each output concatenated onto its input.

    Args:
        num_convs: int, how many ConvBlocks.
        num_channels: int, each ConvBlock's channels: the growth rate.

    Call arguments:
        inputs: `(B, H, W, C)`.
        training: bool, passed on to the batch norms.

    Returns:
        `(B, H, W, C + num_convs * num_channels)`: the input's channels
        first, then each ConvBlock's output in turn.

    Sublayers: `conv_blocks`, a list of `num_convs` ConvBlocks; block i sees
    `C + i * num_channels` channels.
    """

    def __init__(self, num_convs: int, num_channels: int, **kwargs):
        super().__init__(**kwargs)
        _check_positive("num_convs", num_convs)
        _check_positive("num_channels", num_channels)
        self.num_convs = num_convs
        self.num_channels = num_channels
        self.conv_blocks = [
            ConvBlock(
                num_channels, name=f"conv_block_{i}", dtype=self.dtype_policy
            )
            for i in range(num_convs)
        ]

    def build(self, input_shape):
        channels = input_shape[-1]
        for block in self.conv_blocks:
            block.build((*input_shape[:-1], channels))
            channels += self.num_channels

    def call(self, inputs, training=None):
        # TODO(l04): X_0 = inputs and X_k = [X_{k-1}, f_k(X_{k-1})] for each
        #   ConvBlock f_k of self.conv_blocks in order (each given `training`),
        #   joined on the channel axis (the last; joined, not added: adding is
        #   ResNet): f_k gives (B, H, W, num_channels), so inputs (B, H, W, C)
        #   -> (B, H, W, C + num_convs * num_channels), the input's channels
        #   first. Return the last X. Our solution is 5 lines.
        #   中文：每个 ConvBlock 的输出都在通道轴上连结到累积的张量后面
        #   （是连结，不是相加）。
        raise NotImplementedError("l04: DenseBlock.call")

    def get_config(self):
        return {
            **super().get_config(),
            "num_convs": self.num_convs,
            "num_channels": self.num_channels,
        }


class TransitionBlock(keras.layers.Layer):
    """Batch norm, ReLU, 1x1 convolution, 2x2 average pooling.

    Args:
        num_channels: int, the 1x1 convolution's filters.

    Call arguments:
        inputs: `(B, H, W, C)`.
        training: bool, passed on to the batch norm.

    Returns:
        `(B, H // 2, W // 2, num_channels)`.

    Sublayers: `bn`, `relu`, `conv` (1x1), `avg_pool` (2x2, stride 2).
    """

    def __init__(self, num_channels: int, **kwargs):
        super().__init__(**kwargs)
        _check_positive("num_channels", num_channels)
        self.num_channels = num_channels
        layers = keras.layers
        dtype = self.dtype_policy
        self.bn = layers.BatchNormalization(name="bn", dtype=dtype)
        self.relu = layers.ReLU(name="relu", dtype=dtype)
        self.conv = layers.Conv2D(num_channels, 1, name="conv", dtype=dtype)
        self.avg_pool = layers.AveragePooling2D(
            pool_size=2, strides=2, name="avg_pool", dtype=dtype
        )

    def build(self, input_shape):
        self.bn.build(input_shape)
        self.conv.build(input_shape)

    def call(self, inputs, training=None):
        # TODO(l04): the module docstring's transition block: BN (given
        #   `training`), ReLU, the 1x1 convolution, then the average pooling,
        #   with self.bn, self.relu, self.conv and self.avg_pool: X (B, H, W, C)
        #   -> (B, H, W, num_channels) -> (B, H // 2, W // 2, num_channels). Our
        #   solution is 2 lines.
        #   中文：过渡层：批量规范化、ReLU、1x1 卷积，
        #   再用平均汇聚把高和宽减半。
        raise NotImplementedError("l04: TransitionBlock.call")

    def get_config(self):
        return {**super().get_config(), "num_channels": self.num_channels}


def densenet(
    num_classes: int = 10,
    num_channels: int = 64,
    growth_rate: int = 32,
    arch: tuple = (4, 4, 4, 4),
):
    """DenseNet for 96x96 single-channel images (d2l's version).

    Args:
        num_classes: int, the number of logits.
        num_channels: int, the stem's channels (64).
        growth_rate: int, every ConvBlock's channels (32).
        arch: the number of ConvBlocks of each dense block ((4, 4, 4, 4)).

    Returns:
        A `keras.Sequential`; on `(1, 96, 96, 1)` with the defaults:

            Sequential (stem)        (1, 24, 24, 64)
            DenseBlock               (1, 24, 24, 192)    64 + 4 * 32
            TransitionBlock          (1, 12, 12, 96)     192 // 2
            DenseBlock               (1, 12, 12, 224)
            TransitionBlock          (1, 6, 6, 112)
            DenseBlock               (1, 6, 6, 240)
            TransitionBlock          (1, 3, 3, 120)
            DenseBlock               (1, 3, 3, 248)
            BatchNormalization       (1, 3, 3, 248)
            ReLU                     (1, 3, 3, 248)
            GlobalAveragePooling2D   (1, 248)
            Dense                    (1, 10)

        stem: Conv2D(num_channels, 7, strides 2, same),
        BatchNormalization, ReLU, MaxPooling2D(3, strides 2, same).
    """
    for name, value in (
        ("num_classes", num_classes),
        ("num_channels", num_channels),
        ("growth_rate", growth_rate),
    ):
        _check_positive(name, value)
    if not arch:
        raise ValueError(f"`arch` must not be empty, got {arch!r}")
    for num_convs in arch:
        _check_positive("arch", num_convs)
    layers = keras.layers
    # TODO(l04): the docstring's table, as one model: (B, 96, 96, 1) -> the stem
    #   (one layer) (B, 24, 24, num_channels) -> a DenseBlock(num_convs,
    #   growth_rate) per entry of arch, each adding num_convs * growth_rate
    #   channels, with a TransitionBlock between two dense blocks (not after the
    #   last) that halves H, W and the running channel count c (c // 2) -> (B,
    #   3, 3, 248) with the defaults -> batch norm, rectifier, one average per
    #   channel (B, 248) -> (B, num_classes) logits. The stem is the docstring's
    #   7x7 convolution, batch norm, rectifier and 3x3 max-pooling. Our solution
    #   is about 20 lines.
    #   中文：起始部分，arch 每项一个稠密块，块之间用过渡层把通道数减半，
    #   最后全局平均汇聚并输出 logits。
    raise NotImplementedError("l04: densenet")
