"""Lesson 03: GoogLeNet and ResNet (含并行连结的网络、残差网络).

Images are channels-last, (B, H, W, C): the channel axis is the LAST one
(-1), where PyTorch's is axis 1.

Inception block (Szegedy et al. 2015): four paths side by side on the same
input, each keeping height and width, concatenated on the channels:

    path 1: 1x1 conv (c1)
    path 2: 1x1 conv (c2[0]) -> 3x3 conv, padding same (c2[1])
    path 3: 1x1 conv (c3[0]) -> 5x5 conv, padding same (c3[1])
    path 4: 3x3 max-pool, stride 1, padding same -> 1x1 conv (c4)
    output: concat([p1, p2, p3, p4], axis=-1): c1 + c2[1] + c3[1] + c4
            channels, in that order.

Every convolution has a ReLU. The 1x1 convolutions before the 3x3 and 5x5
ones cut the channels first, which keeps the block cheap.

Residual block (He et al. 2016): the layers learn the residual
F(x) = f(x) - x, and the block adds the input back (残差连接):

    Y = relu(bn1(conv1(X)))          conv1: 3x3, `strides`, padding same
    Y = bn2(conv2(Y))                conv2: 3x3, padding same
    out = relu(Y + X')               X' = X, or conv3(X): a 1x1 conv with
                                     `strides` when the shapes change

If the layers' weights go to zero the block is the identity (after the
relu): an extra block can always do at least as well as none.
BatchNormalization (批量规范化) uses the batch's statistics when
`training=True` and its moving averages when `training=False`: pass
`training` on to it.

Reference: d2l 7.4, 7.6 (8.4, 8.6).
"""

import keras
from keras import ops


def _check_positive(name, value):
    if int(value) != value or value <= 0:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def _check_pair(name, value):
    if len(value) != 2:
        raise ValueError(f"`{name}` must be a pair of ints, got {value!r}")
    for v in value:
        _check_positive(name, v)


class Inception(keras.layers.Layer):
    """GoogLeNet's Inception block: four parallel paths, concatenated.

    Args:
        c1: int, path 1's channels (1x1 conv).
        c2: (int, int), path 2: the 1x1 conv's and the 3x3 conv's channels.
        c3: (int, int), path 3: the 1x1 conv's and the 5x5 conv's channels.
        c4: int, path 4's channels (the 1x1 conv after the 3x3 max-pool).

    Call arguments:
        inputs: `(B, H, W, C)`.

    Returns:
        `(B, H, W, c1 + c2[1] + c3[1] + c4)`: paths 1, 2, 3, 4 in order on
        the last axis.

    Sublayers: `p1_1`, `p2_1`, `p2_2`, `p3_1`, `p3_2`, `p4_1` (the pool),
    `p4_2`, named as in d2l.
    """

    def __init__(self, c1: int, c2: tuple, c3: tuple, c4: int, **kwargs):
        super().__init__(**kwargs)
        _check_positive("c1", c1)
        _check_pair("c2", c2)
        _check_pair("c3", c3)
        _check_positive("c4", c4)
        self.c1, self.c2, self.c3, self.c4 = c1, tuple(c2), tuple(c3), c4
        layers = keras.layers
        conv = {"activation": "relu", "dtype": self.dtype_policy}
        self.p1_1 = layers.Conv2D(c1, 1, name="p1_1", **conv)
        self.p2_1 = layers.Conv2D(c2[0], 1, name="p2_1", **conv)
        self.p2_2 = layers.Conv2D(c2[1], 3, padding="same", name="p2_2", **conv)
        self.p3_1 = layers.Conv2D(c3[0], 1, name="p3_1", **conv)
        self.p3_2 = layers.Conv2D(c3[1], 5, padding="same", name="p3_2", **conv)
        self.p4_1 = layers.MaxPooling2D(
            3, strides=1, padding="same", name="p4_1", dtype=self.dtype_policy
        )
        self.p4_2 = layers.Conv2D(c4, 1, name="p4_2", **conv)

    def build(self, input_shape):
        batch_hw = tuple(input_shape[:-1])
        for layer in (self.p1_1, self.p2_1, self.p3_1, self.p4_2):
            layer.build(input_shape)
        self.p2_2.build((*batch_hw, self.c2[0]))
        self.p3_2.build((*batch_hw, self.c3[0]))

    def call(self, inputs):
        # TODO(l03): the module docstring's four paths on the same inputs,
        #   joined side by side on the channels: path 1 is self.p1_1; path 2 is
        #   self.p2_1 then self.p2_2; path 3 is self.p3_1 then self.p3_2; path 4
        #   is the pool self.p4_1 then self.p4_2. Each keeps H and W. inputs (B,
        #   H, W, C) -> (B, H, W, c1 + c2[1] + c3[1] + c4), the paths in the
        #   order 1, 2, 3, 4 on the channel axis, which is the last one here
        #   (PyTorch's axis 1 would be the height). Our solution is 5 lines.
        #   中文：四条路径读同一个输入，按 1、2、3、
        #   4 的顺序在通道轴（最后一个轴）上连结。
        # BEGIN SOLUTION
        p1 = self.p1_1(inputs)  # (B, H, W, c1)
        p2 = self.p2_2(self.p2_1(inputs))  # (B, H, W, c2[1])
        p3 = self.p3_2(self.p3_1(inputs))  # (B, H, W, c3[1])
        p4 = self.p4_2(self.p4_1(inputs))  # (B, H, W, c4)
        return ops.concatenate([p1, p2, p3, p4], axis=-1)
        # END SOLUTION

    def get_config(self):
        return {
            **super().get_config(),
            "c1": self.c1,
            "c2": self.c2,
            "c3": self.c3,
            "c4": self.c4,
        }


def googlenet(num_classes: int = 10):
    """GoogLeNet for 96x96 single-channel images (d2l's Fashion-MNIST size).

    Args:
        num_classes: int, the number of logits.

    Returns:
        A `keras.Sequential` of five stages and a Dense layer; on
        `(1, 96, 96, 1)` (the seed's table, channels-last):

            Sequential b1  (1, 24, 24, 64)
            Sequential b2  (1, 12, 12, 192)
            Sequential b3  (1, 6, 6, 480)
            Sequential b4  (1, 3, 3, 832)
            Sequential b5  (1, 1024)
            Dense          (1, 10)

        b1: Conv2D(64, 7, strides 2, same, relu), MaxPooling2D(3, 2, same)
        b2: Conv2D(64, 1, relu), Conv2D(192, 3, same, relu),
            MaxPooling2D(3, 2, same)
        b3: Inception(64, (96, 128), (16, 32), 32),
            Inception(128, (128, 192), (32, 96), 64), MaxPooling2D(3, 2, same)
        b4: Inception(192, (96, 208), (16, 48), 64),
            Inception(160, (112, 224), (24, 64), 64),
            Inception(128, (128, 256), (24, 64), 64),
            Inception(112, (144, 288), (32, 64), 64),
            Inception(256, (160, 320), (32, 128), 128),
            MaxPooling2D(3, 2, same)
        b5: Inception(256, (160, 320), (32, 128), 128),
            Inception(384, (192, 384), (48, 128), 128),
            GlobalAveragePooling2D()
    """
    _check_positive("num_classes", num_classes)
    layers = keras.layers

    # TODO(l03): the docstring's five stages b1 ... b5, each one layer of the
    #   returned model (one row of the table), built from the docstring's lists,
    #   then a dense layer of num_classes logits: (B, 96, 96, 1) -> (B, 24, 24,
    #   64) after b1 -> (B, 12, 12, 192) -> (B, 6, 6, 480) -> (B, 3, 3, 832) ->
    #   (B, 1024) after b5 -> (B, num_classes). Every max-pooling here is 3x3
    #   with stride 2 and padding 'same'; every convolution has a ReLU. Our
    #   solution is about 30 lines.
    #   中文：五个阶段 b1 ... b5，各为返回模型中的一层，
    #   再接一个输出 num_classes 个 logits 的全连接层。
    # BEGIN SOLUTION
    def pool():
        return layers.MaxPooling2D(pool_size=3, strides=2, padding="same")

    b1 = keras.Sequential(
        [
            layers.Conv2D(64, 7, strides=2, padding="same", activation="relu"),
            pool(),
        ]
    )
    b2 = keras.Sequential(
        [
            layers.Conv2D(64, 1, activation="relu"),
            layers.Conv2D(192, 3, padding="same", activation="relu"),
            pool(),
        ]
    )
    b3 = keras.Sequential(
        [
            Inception(64, (96, 128), (16, 32), 32),
            Inception(128, (128, 192), (32, 96), 64),
            pool(),
        ]
    )
    b4 = keras.Sequential(
        [
            Inception(192, (96, 208), (16, 48), 64),
            Inception(160, (112, 224), (24, 64), 64),
            Inception(128, (128, 256), (24, 64), 64),
            Inception(112, (144, 288), (32, 64), 64),
            Inception(256, (160, 320), (32, 128), 128),
            pool(),
        ]
    )
    b5 = keras.Sequential(
        [
            Inception(256, (160, 320), (32, 128), 128),
            Inception(384, (192, 384), (48, 128), 128),
            layers.GlobalAveragePooling2D(),
        ]
    )
    return keras.Sequential([b1, b2, b3, b4, b5, layers.Dense(num_classes)])
    # END SOLUTION


class Residual(keras.layers.Layer):
    """ResNet's residual block: two 3x3 convolutions with batch norm, and
    the input added back before the last ReLU.

    Args:
        num_channels: int, the output channels.
        use_1x1conv: bool, pass the input through a 1x1 convolution (with
            `strides`) before adding it: needed when the channels or the
            size change.
        strides: int, the stride of conv1 (and of the 1x1 convolution).

    Call arguments:
        inputs: `(B, H, W, C)`; without the 1x1 convolution C must equal
            `num_channels` and `strides` must be 1.
        training: bool, batch statistics (True) or moving averages (False)
            in the batch norms.

    Returns:
        `(B, ceil(H / strides), ceil(W / strides), num_channels)`.

    Sublayers: `conv1`, `conv2`, `conv3` (None without the 1x1 conv),
    `bn1`, `bn2`.
    """

    def __init__(
        self,
        num_channels: int,
        use_1x1conv: bool = False,
        strides: int = 1,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_positive("num_channels", num_channels)
        _check_positive("strides", strides)
        self.num_channels = num_channels
        self.use_1x1conv = bool(use_1x1conv)
        self.strides = strides
        layers = keras.layers
        dtype = self.dtype_policy
        self.conv1 = layers.Conv2D(
            num_channels,
            3,
            strides=strides,
            padding="same",
            name="conv1",
            dtype=dtype,
        )
        self.conv2 = layers.Conv2D(
            num_channels, 3, padding="same", name="conv2", dtype=dtype
        )
        self.conv3 = None
        if use_1x1conv:
            self.conv3 = layers.Conv2D(
                num_channels, 1, strides=strides, name="conv3", dtype=dtype
            )
        self.bn1 = layers.BatchNormalization(name="bn1", dtype=dtype)
        self.bn2 = layers.BatchNormalization(name="bn2", dtype=dtype)

    def build(self, input_shape):
        out_shape = (*input_shape[:-1], self.num_channels)
        self.conv1.build(input_shape)
        self.conv2.build(out_shape)
        if self.conv3 is not None:
            self.conv3.build(input_shape)
        self.bn1.build(out_shape)
        self.bn2.build(out_shape)

    def call(self, inputs, training=None):
        # TODO(l03): the module docstring's residual block: Y =
        #   ReLU(bn1(conv1(X))), then Y = bn2(conv2(Y)), out = ReLU(Y + X'),
        #   with X' = X, or self.conv3(X) when self.conv3 is not None. X (B, H,
        #   W, C) -> Y (B, H', W', num_channels) -> out (B, H', W',
        #   num_channels), H' = ceil(H / strides); X' has Y's shape. Both batch
        #   norms get `training`; Y has no ReLU of its own before the add. Our
        #   solution is 4 lines.
        #   中文：残差块：out = ReLU(Y + X')，X' 是 X 或 conv3(X)；
        #   两个批量规范化都要传 training。
        # BEGIN SOLUTION
        Y = ops.relu(self.bn1(self.conv1(inputs), training=training))
        Y = self.bn2(self.conv2(Y), training=training)
        shortcut = inputs if self.conv3 is None else self.conv3(inputs)
        return ops.relu(Y + shortcut)
        # END SOLUTION

    def get_config(self):
        return {
            **super().get_config(),
            "num_channels": self.num_channels,
            "use_1x1conv": self.use_1x1conv,
            "strides": self.strides,
        }


def resnet_block(num_channels: int, num_residuals: int, first_block=False):
    """A ResNet stage: `num_residuals` residual blocks.

    The first block of a stage halves height and width and changes the
    channels (`Residual(num_channels, use_1x1conv=True, strides=2)`),
    except in the first stage (`first_block=True`), which follows a
    max-pooling and keeps them.

    Returns:
        A `keras.Sequential` of `Residual` blocks.
    """
    _check_positive("num_channels", num_channels)
    _check_positive("num_residuals", num_residuals)
    # TODO(l03): num_residuals residual blocks as one model. A stage halves the
    #   size once, at its first block, Residual(num_channels, use_1x1conv=True,
    #   strides=2): (B, H, W, C) -> (B, H / 2, W / 2, num_channels). With
    #   first_block (the stage right after the stem's pooling) nothing halves:
    #   (B, H, W, num_channels) -> (B, H, W, num_channels). Every other block is
    #   Residual(num_channels). Our solution is about 7 lines.
    #   中文：一个阶段只在第一个块减半一次尺寸；first_block 时什么都不减半。
    # BEGIN SOLUTION
    blocks = keras.Sequential()
    for i in range(num_residuals):
        if i == 0 and not first_block:
            blocks.add(Residual(num_channels, use_1x1conv=True, strides=2))
        else:
            blocks.add(Residual(num_channels))
    return blocks
    # END SOLUTION


def resnet18(num_classes: int = 10, widths: tuple = (64, 128, 256, 512)):
    """ResNet-18 for 224x224 single-channel images.

    Args:
        num_classes: int, the number of logits.
        widths: the four stages' channels (d2l's by default; b1 has
            widths[0]). Small widths give a narrow ResNet that trains fast.

    Returns:
        A `keras.Sequential`; on `(1, 224, 224, 1)` (the seed's table,
        channels-last):

            Sequential b1                (1, 56, 56, 64)
            Sequential (2 Residual)      (1, 56, 56, 64)
            Sequential                   (1, 28, 28, 128)
            Sequential                   (1, 14, 14, 256)
            Sequential                   (1, 7, 7, 512)
            GlobalAveragePooling2D       (1, 512)
            Dense                        (1, 10)

        b1: Conv2D(64, 7, strides 2, same), BatchNormalization,
            ReLU, MaxPooling2D(3, 2, same). Then resnet_block(64, 2,
            first_block=True), resnet_block(128, 2), resnet_block(256, 2),
            resnet_block(512, 2). 18 = 1 + 4 * 2 * 2 convolutions + 1 dense.
    """
    _check_positive("num_classes", num_classes)
    if len(widths) != 4:
        raise ValueError(f"`widths` must have 4 channel counts, got {widths!r}")
    for width in widths:
        _check_positive("widths", width)
    layers = keras.layers
    # TODO(l03): the docstring's table, as one model: (B, 224, 224, 1) -> b1 ->
    #   (B, 56, 56, widths[0]) -> four stages of 2 residual blocks on widths[0]
    #   (first_block: it keeps 56x56), widths[1], widths[2], widths[3] (each
    #   halves H and W) -> (B, 7, 7, widths[3]) -> one average per channel (B,
    #   widths[3]) -> (B, num_classes) logits. b1 is a 7x7 convolution of
    #   widths[0] filters with stride 2, padding 'same' and no activation of its
    #   own, a batch norm, a rectifier, then a 3x3 max-pooling with stride 2,
    #   padding 'same'. Our solution is about 15 lines.
    #   中文：起始部分 b1，四个各含 2 个残差块的阶段，全局平均汇聚，
    #   再输出 logits。
    # BEGIN SOLUTION
    b1 = keras.Sequential(
        [
            layers.Conv2D(widths[0], 7, strides=2, padding="same"),
            layers.BatchNormalization(),
            layers.ReLU(),
            layers.MaxPooling2D(pool_size=3, strides=2, padding="same"),
        ]
    )
    return keras.Sequential(
        [
            b1,
            resnet_block(widths[0], 2, first_block=True),
            resnet_block(widths[1], 2),
            resnet_block(widths[2], 2),
            resnet_block(widths[3], 2),
            layers.GlobalAveragePooling2D(),
            layers.Dense(num_classes),
        ]
    )
    # END SOLUTION
