# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l02`.
# (Generated from solutions/l02_classic_cnns.py by `m2t make-lessons`.)
"""Lesson 02: AlexNet, VGG and NiN.

深度卷积神经网络 (AlexNet)、使用块的网络 (VGG)、网络中的网络 (NiN).

Three ways to stack convolutions, each a `keras.Sequential` you build from
Keras layers. Images are channels-last, (B, H, W, C): d2l's PyTorch shape
(1, 96, 54, 54) is (1, 54, 54, 96) here.

Output size of a convolution or pooling window k with stride s on n pixels:

    padding="valid":  floor((n - k) / s) + 1      (no padding)
    padding="same":   ceil(n / s)                 (zeros added around)

so AlexNet's first layer, 96 filters 11x11 with stride 4, maps 224 -> 54.
Parameters of a convolution: k*k*C_in*C_out weights + C_out biases; of a
dense layer: D_in*D_out + D_out.

* AlexNet (Krizhevsky et al. 2012): five convolutions, three max-poolings,
  then two 4096-wide dense layers with dropout (暂退法). ReLU throughout.
* VGG (Simonyan & Zisserman 2014): the *block* is the unit: a VGG block is
  `num_convs` 3x3 convolutions (padding "same", ReLU) followed by ONE 2x2
  max-pooling with stride 2 that halves height and width. VGG-11 is five
  blocks, conv_arch ((1, 64), (1, 128), (2, 256), (2, 512), (2, 512)).
* NiN (Lin et al. 2013): a NiN block is a convolution followed by two 1x1
  convolutions, each with ReLU: an MLP applied at every pixel, across the
  channels. No dense layers: the last block has one channel per class and a
  global average pooling (全局平均汇聚层) turns each channel into a logit.

Reference: d2l 7.1-7.3 (8.1-8.3).
"""

import keras

VGG11 = ((1, 64), (1, 128), (2, 256), (2, 512), (2, 512))
"""VGG-11's conv_arch: (number of convolutions, channels) per block."""


def _check_positive(name, value):
    if int(value) != value or value <= 0:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def _check_widths(name, widths, count):
    if len(widths) != count:
        raise ValueError(
            f"`{name}` must have {count} channel counts, got {widths!r}"
        )
    for width in widths:
        _check_positive(name, width)


def _check_dropout(dropout):
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"`dropout` must be in [0, 1), got {dropout!r}")


def alexnet(
    num_classes: int = 10,
    widths: tuple = (96, 256, 384, 384, 256),
    num_hiddens: int = 4096,
    dropout: float = 0.5,
):
    """AlexNet for 224x224 single-channel images (d2l's Fashion-MNIST
    version: one input channel, 10 classes).

    Args:
        num_classes: int, the number of logits.
        widths: the five convolutions' channel counts (d2l's by default; a
            smaller tuple gives a narrow AlexNet that trains fast).
        num_hiddens: int, the width of the two hidden dense layers.
        dropout: float in [0, 1), after each hidden dense layer.

    Returns:
        A `keras.Sequential`; on `(B, 224, 224, 1)` it returns
        `(B, num_classes)` logits. Its layers and their output shapes (the
        seed's table, channels-last; fused ReLUs print as a row each):

            Conv2D 11x11/4 valid  (1, 54, 54, 96)    + ReLU
            MaxPooling2D 3/2      (1, 26, 26, 96)
            Conv2D 5x5 same       (1, 26, 26, 256)   + ReLU
            MaxPooling2D 3/2      (1, 12, 12, 256)
            Conv2D 3x3 same       (1, 12, 12, 384)   + ReLU
            Conv2D 3x3 same       (1, 12, 12, 384)   + ReLU
            Conv2D 3x3 same       (1, 12, 12, 256)   + ReLU
            MaxPooling2D 3/2      (1, 5, 5, 256)
            Flatten               (1, 6400)
            Dense                 (1, 4096)          + ReLU, Dropout
            Dense                 (1, 4096)          + ReLU, Dropout
            Dense                 (1, 10)
    """
    _check_positive("num_classes", num_classes)
    _check_widths("widths", widths, 5)
    _check_positive("num_hiddens", num_hiddens)
    _check_dropout(dropout)
    layers = keras.layers
    # TODO(l02): return keras.Sequential([...]) with the layers of the table
    #   in the docstring, using widths[0..4], num_hiddens, dropout and
    #   num_classes: layers.Conv2D(filters, kernel_size, strides=...,
    #   padding=..., activation="relu"), layers.MaxPooling2D(pool_size=3,
    #   strides=2) (padding "valid"), layers.Flatten(), layers.Dense(units,
    #   activation="relu"), layers.Dropout(dropout). The first convolution
    #   has padding "valid" (224 -> 54), the others "same". The last Dense
    #   has no activation: it returns logits. Our solution is 16 lines.
    raise NotImplementedError("l02: alexnet")


def vgg_block(num_convs: int, num_channels: int):
    """A VGG block: `num_convs` 3x3 convolutions, then one 2x2 max-pooling.

    Args:
        num_convs: int, how many convolutions (each `num_channels` filters,
            3x3, padding "same", ReLU): they keep height and width.
        num_channels: int, their output channels.

    Returns:
        A `keras.Sequential`: `(B, H, W, C)` -> `(B, H // 2, W // 2,
        num_channels)`.
    """
    _check_positive("num_convs", num_convs)
    _check_positive("num_channels", num_channels)
    layers = keras.layers
    # TODO(l02): a keras.Sequential of num_convs layers.Conv2D(num_channels,
    #   kernel_size=3, padding="same", activation="relu") and then ONE
    #   layers.MaxPooling2D(pool_size=2, strides=2): the pooling closes the
    #   block, it does not follow each convolution. (B, H, W, C) ->
    #   (B, H, W, num_channels) -> (B, H // 2, W // 2, num_channels).
    #   Our solution is about 5 lines.
    raise NotImplementedError("l02: vgg_block")


def vgg(
    conv_arch: tuple = VGG11,
    num_classes: int = 10,
    num_hiddens: int = 4096,
    dropout: float = 0.5,
):
    """VGG: one `vgg_block` per `(num_convs, num_channels)` of `conv_arch`,
    then AlexNet's dense head.

    Args:
        conv_arch: ((num_convs, num_channels), ...) per block; VGG-11 by
            default.
        num_classes: int, the number of logits.
        num_hiddens: int, the width of the two hidden dense layers.
        dropout: float in [0, 1), after each hidden dense layer.

    Returns:
        A `keras.Sequential`; VGG-11 on `(1, 224, 224, 1)`:

            Sequential (vgg_block)  (1, 112, 112, 64)
            Sequential              (1, 56, 56, 128)
            Sequential              (1, 28, 28, 256)
            Sequential              (1, 14, 14, 512)
            Sequential              (1, 7, 7, 512)
            Flatten                 (1, 25088)
            Dense                   (1, 4096)   + ReLU, Dropout
            Dense                   (1, 4096)   + ReLU, Dropout
            Dense                   (1, 10)
    """
    if not conv_arch:
        raise ValueError(f"`conv_arch` must not be empty, got {conv_arch!r}")
    for num_convs, num_channels in conv_arch:
        _check_positive("conv_arch", num_convs)
        _check_positive("conv_arch", num_channels)
    _check_positive("num_classes", num_classes)
    _check_positive("num_hiddens", num_hiddens)
    _check_dropout(dropout)
    layers = keras.layers
    # TODO(l02): a keras.Sequential of vgg_block(num_convs, num_channels)
    #   for each pair of conv_arch (each block one layer of the Sequential),
    #   then layers.Flatten(), layers.Dense(num_hiddens, activation="relu"),
    #   layers.Dropout(dropout), the same Dense and Dropout again, and
    #   layers.Dense(num_classes) (logits). Our solution is about 10 lines.
    raise NotImplementedError("l02: vgg")


def nin_block(num_channels: int, kernel_size: int, strides: int, padding: str):
    """A NiN block: a convolution, then two 1x1 convolutions, all with ReLU.

    Args:
        num_channels: int, the output channels of all three convolutions.
        kernel_size: int, the first convolution's window.
        strides: int, the first convolution's stride.
        padding: "valid" or "same", the first convolution's padding.

    Returns:
        A `keras.Sequential` of three `Conv2D` layers: `(B, H, W, C)` ->
        `(B, H', W', num_channels)`, H' and W' set by the first one.
    """
    _check_positive("num_channels", num_channels)
    _check_positive("kernel_size", kernel_size)
    _check_positive("strides", strides)
    if padding not in ("valid", "same"):
        raise ValueError(
            f"`padding` must be 'valid' or 'same', got {padding!r}"
        )
    layers = keras.layers
    # TODO(l02): keras.Sequential of layers.Conv2D(num_channels, kernel_size,
    #   strides=strides, padding=padding, activation="relu"), then two
    #   layers.Conv2D(num_channels, kernel_size=1, activation="relu"): the
    #   1x1 convolutions are a per-pixel MLP over the channels.
    #   Our solution is about 9 lines.
    raise NotImplementedError("l02: nin_block")


def nin(
    num_classes: int = 10,
    widths: tuple = (96, 256, 384),
    dropout: float = 0.5,
):
    """NiN for 224x224 single-channel images: no dense layer at all.

    Args:
        num_classes: int, the last block's channels = the number of logits.
        widths: the first three blocks' channels (d2l's by default).
        dropout: float in [0, 1), before the last block.

    Returns:
        A `keras.Sequential`; on `(1, 224, 224, 1)`:

            Sequential (nin_block 11/4 valid)  (1, 54, 54, 96)
            MaxPooling2D 3/2                   (1, 26, 26, 96)
            Sequential (nin_block 5/1 same)    (1, 26, 26, 256)
            MaxPooling2D 3/2                   (1, 12, 12, 256)
            Sequential (nin_block 3/1 same)    (1, 12, 12, 384)
            MaxPooling2D 3/2                   (1, 5, 5, 384)
            Dropout                            (1, 5, 5, 384)
            Sequential (nin_block 3/1 same)    (1, 5, 5, 10)
            GlobalAveragePooling2D             (1, 10)

        (The seed's AdaptiveAvgPool2d (1, 10, 1, 1) and Flatten (1, 10) are
        one GlobalAveragePooling2D here.)
    """
    _check_positive("num_classes", num_classes)
    _check_widths("widths", widths, 3)
    _check_dropout(dropout)
    layers = keras.layers
    # TODO(l02): keras.Sequential of the layers in the docstring's table:
    #   nin_block(widths[0], 11, 4, "valid"), layers.MaxPooling2D(3,
    #   strides=2), nin_block(widths[1], 5, 1, "same"), the same pooling,
    #   nin_block(widths[2], 3, 1, "same"), the same pooling,
    #   layers.Dropout(dropout), nin_block(num_classes, 3, 1, "same") and
    #   layers.GlobalAveragePooling2D(): one average per channel, (B, H, W,
    #   num_classes) -> (B, num_classes). Our solution is about 13 lines.
    raise NotImplementedError("l02: nin")
