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
    # TODO(l02): the network of the docstring's table, its rows in order: (B,
    #   224, 224, 1) -> (B, num_classes) logits, with widths[0..4] the five
    #   convolutions' channels, num_hiddens the width of the two hidden dense
    #   layers, and dropout at rate `dropout` after each of them. The table
    #   fixes every window, stride and padding (check each output size with the
    #   module docstring's formula: the first convolution and the poolings are
    #   'valid'). Every convolution and hidden dense layer has a ReLU; the last
    #   layer has none. Return the model. Our solution is about 16 lines.
    #   中文：按文档字符串的表逐行搭出 AlexNet；
    #   每个卷积层和隐藏的全连接层都带 ReLU，最后一层不带。
    # BEGIN SOLUTION
    return keras.Sequential(
        [
            layers.Conv2D(widths[0], 11, strides=4, activation="relu"),
            layers.MaxPooling2D(pool_size=3, strides=2),
            layers.Conv2D(widths[1], 5, padding="same", activation="relu"),
            layers.MaxPooling2D(pool_size=3, strides=2),
            layers.Conv2D(widths[2], 3, padding="same", activation="relu"),
            layers.Conv2D(widths[3], 3, padding="same", activation="relu"),
            layers.Conv2D(widths[4], 3, padding="same", activation="relu"),
            layers.MaxPooling2D(pool_size=3, strides=2),
            layers.Flatten(),
            layers.Dense(num_hiddens, activation="relu"),
            layers.Dropout(dropout),
            layers.Dense(num_hiddens, activation="relu"),
            layers.Dropout(dropout),
            layers.Dense(num_classes),
        ]
    )
    # END SOLUTION


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
    # TODO(l02): num_convs convolutions of num_channels 3x3 filters, padding
    #   'same', each with a ReLU, then one 2x2 max-pooling with stride 2 that
    #   closes the block (one, not one per convolution): (B, H, W, C) -> (B, H,
    #   W, num_channels) after the convolutions -> (B, H // 2, W // 2,
    #   num_channels). Return the block as one model. Our solution is about 5
    #   lines.
    #   中文：num_convs 个 3x3、'same' 的卷积层，各带 ReLU，最后只接一个 2x2、
    #   步幅 2 的最大汇聚层。
    # BEGIN SOLUTION
    block = keras.Sequential()
    for _ in range(num_convs):
        block.add(
            layers.Conv2D(
                num_channels, kernel_size=3, padding="same", activation="relu"
            )
        )
    block.add(layers.MaxPooling2D(pool_size=2, strides=2))
    return block
    # END SOLUTION


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
    # TODO(l02): one vgg_block per (num_convs, num_channels) pair of conv_arch,
    #   each block one layer of the returned model, then AlexNet's head:
    #   flatten, two hidden dense layers of num_hiddens units, each with a ReLU
    #   and then dropout at rate `dropout`, and a dense layer of num_classes
    #   logits. VGG-11 (the docstring's table): (B, 224, 224, 1) -> (B, 7, 7,
    #   512) after the blocks -> (B, num_classes). Our solution is about 10
    #   lines.
    #   中文：conv_arch 的每一项一个 VGG 块，再接 AlexNet 的全连接部分，
    #   输出 num_classes 个 logits。
    # BEGIN SOLUTION
    net = keras.Sequential(
        [vgg_block(num_convs, channels) for num_convs, channels in conv_arch]
    )
    net.add(layers.Flatten())
    for _ in range(2):
        net.add(layers.Dense(num_hiddens, activation="relu"))
        net.add(layers.Dropout(dropout))
    net.add(layers.Dense(num_classes))
    return net
    # END SOLUTION


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
    # TODO(l02): three convolutions of num_channels filters, each with a ReLU:
    #   the first with the given kernel_size, strides and padding, then two 1x1
    #   ones (an MLP across the channels at every pixel): (B, H, W, C) -> (B,
    #   H', W', num_channels), H' and W' set by the first. Return the three as
    #   one model. Our solution is about 9 lines.
    #   中文：三个带 ReLU 的卷积层：第一个用给定的窗口、步幅和填充，
    #   后两个是 1x1（逐像素的多层感知机）。
    # BEGIN SOLUTION
    return keras.Sequential(
        [
            layers.Conv2D(
                num_channels,
                kernel_size,
                strides=strides,
                padding=padding,
                activation="relu",
            ),
            layers.Conv2D(num_channels, kernel_size=1, activation="relu"),
            layers.Conv2D(num_channels, kernel_size=1, activation="relu"),
        ]
    )
    # END SOLUTION


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
    # TODO(l02): the docstring's table, its rows in order: (B, 224, 224, 1) ->
    #   (B, num_classes). Three nin_blocks on widths[0], widths[1], widths[2]
    #   (windows 11, 5, 3; strides 4, 1, 1; paddings 'valid', 'same', 'same'),
    #   each followed by a 3x3 max-pooling with stride 2 and no padding; dropout
    #   at rate `dropout`; a last nin_block of num_classes channels (3x3, stride
    #   1, 'same'); then one average per channel over the whole image, (B, 5, 5,
    #   num_classes) -> (B, num_classes): the logits. No dense layer. Our
    #   solution is about 13 lines.
    #   中文：按表搭出 NiN：没有全连接层，最后一个块每个类别一个通道，
    #   全局平均汇聚后就是 logits。
    # BEGIN SOLUTION
    return keras.Sequential(
        [
            nin_block(widths[0], kernel_size=11, strides=4, padding="valid"),
            layers.MaxPooling2D(pool_size=3, strides=2),
            nin_block(widths[1], kernel_size=5, strides=1, padding="same"),
            layers.MaxPooling2D(pool_size=3, strides=2),
            nin_block(widths[2], kernel_size=3, strides=1, padding="same"),
            layers.MaxPooling2D(pool_size=3, strides=2),
            layers.Dropout(dropout),
            nin_block(num_classes, kernel_size=3, strides=1, padding="same"),
            layers.GlobalAveragePooling2D(),
        ]
    )
    # END SOLUTION
