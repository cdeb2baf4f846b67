# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 03: GoogLeNet and ResNet (含并行连结的网络、残差网络)
#
# This notebook runs **your** `lessons/l03_inception_resnet.py` (reloaded
# after each save); the last cell grades it like `m2t grade 03`.
#
# An Inception block runs four paths on the same input and joins them on
# the channel axis (the last one here). A residual block adds its input
# back to what its layers compute, `relu(F(X) + X)`: with `F = 0` it passes
# the input through, so an extra block never has to hurt.
#
# 这个笔记本运行**你的**
# `lessons/l03_inception_resnet.py`（每次保存后重新加载）；最后一个单元格像
# `m2t grade 03` 那样给它评分。Inception 块在同一个输入上运行四条路径，
# 再在通道轴（这里是最后一个轴）上把它们连结起来。
# 残差块把输入加回到它的各层算出的结果上，`relu(F(X) + X)`：`F = 0`
# 时它让输入原样通过，所以多加一个块永远不会有害。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t.student import notebooks

m = notebooks.load("03")
rng = np.random.default_rng(0)


def count(layer):
    return sum(int(np.prod(w.shape)) for w in layer.trainable_weights)


def table(net, input_shape):
    """Print each top-level layer's output shape and trainable parameters,
    from a symbolic batch (no data goes through)."""
    x = keras.Input(batch_shape=input_shape)
    print(f"{'layer':<24}{'output shape':>20}{'parameters':>14}")
    for layer in net.layers:
        x = layer(x)
        shape = str(tuple(x.shape))
        print(f"{type(layer).__name__:<24}{shape:>20}{count(layer):>14,}")
    print(f"{'total':<44}{count(net):>14,}\n")


# %% [markdown]
# ## One Inception block（一个 Inception 块）
#
# Every path keeps height and width; the 1x1 convolutions in front of the
# 3x3 and 5x5 ones cut 192 channels to 96 and 16 first, which keeps the
# block cheap. The output has `64 + 128 + 32 + 32 = 256` channels.
#
# 每条路径都保持高和宽；3x3 和 5x5 卷积前面的 1x1 卷积先把 192 个通道削减到 96
# 和 16，让这个块的计算量保持很小。输出有 `64 + 128 + 32 + 32 = 256` 个通道。

# %%
with notebooks.attempt("Inception"):
    block = m.Inception(64, (96, 128), (16, 32), 32)
    x = rng.standard_normal((2, 12, 12, 192)).astype("float32")
    print("in ", x.shape, "\nout", tuple(block(x).shape))
    for name in ("p1_1", "p2_2", "p3_2", "p4_2"):
        print(f"  path {name[1]}: {getattr(block, name).filters} channels")

# %% [markdown]
# ## GoogLeNet
#
# On a 96x96 image, five stages each halve the size; the last one ends
# with a global average pooling instead of a big dense layer.
#
# 在 96x96 的图像上，五个阶段各把尺寸减半；最后一个阶段用全局平均汇聚收尾，
# 而不是一个大的全连接层。

# %%
with notebooks.attempt("googlenet"):
    net = m.googlenet()
    table(net, (1, 96, 96, 1))
    blocks, labels = [], []
    for i, stage in enumerate(net.layers, start=1):
        inner = getattr(stage, "layers", [])
        inner = [layer for layer in inner if isinstance(layer, m.Inception)]
        for k, layer in enumerate(inner, start=1):
            blocks.append(layer)
            labels.append(f"b{i}, Inception {k}")
    widths = np.array([(b.c1, b.c2[1], b.c3[1], b.c4) for b in blocks])
    paths = ["1x1", "1x1, 3x3", "1x1, 5x5", "pool, 1x1"]
    plt.figure(figsize=(7.5, 3))
    left = np.zeros(len(blocks))
    for j, path in enumerate(paths):
        plt.barh(labels, widths[:, j], left=left, label=path)
        left += widths[:, j]
    plt.gca().invert_yaxis()
    plt.xlabel("output channels of each Inception block, by path")
    plt.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    plt.show()

# %% [markdown]
# ## Residual blocks（残差块）
#
# Without a 1x1 convolution the shapes must match: the input is added as
# it is. With `use_1x1conv=True, strides=2` the shortcut is a strided 1x1
# convolution, so it halves the size and changes the channels the same way
# the main path does.
#
# 没有 1x1 卷积时形状必须一致：输入原样加上去。`use_1x1conv=True, strides=2`
# 时，捷径是一个带步幅的 1x1 卷积，它像主路径一样把尺寸减半并改变通道数。

# %%
with notebooks.attempt("Residual"):
    x = rng.standard_normal((4, 6, 6, 3)).astype("float32")
    print("Residual(3)                         ", tuple(m.Residual(3)(x).shape))
    wide = m.Residual(6, use_1x1conv=True, strides=2)
    print("Residual(6, use_1x1conv, strides=2) ", tuple(wide(x).shape))

# %% [markdown]
# Set the last batch norm's scale `gamma` to zero: the main path then
# outputs 0 (its shift `beta` starts at 0 too) and the block is
# `relu(0 + X)`: the identity on a non-negative input, whatever the
# convolutions' weights are.
#
# 把最后一个批量规范化的缩放 `gamma` 设为零：主路径于是输出 0（它的平移 `beta`
# 也从 0 开始），这个块就是 `relu(0 + X)`：无论卷积的权重是什么，
# 对非负输入它都是恒等映射。

# %%
with notebooks.attempt("Residual"):
    block = m.Residual(8)
    x = np.abs(rng.standard_normal((2, 5, 5, 8))).astype("float32")
    before = np.asarray(block(x, training=False))
    block.bn2.gamma.assign(np.zeros(8, "float32"))
    after = np.asarray(block(x, training=False))
    print("max |block(x) - x|: random weights", np.abs(before - x).max())
    print("                    gamma = 0     ", np.abs(after - x).max())

# %% [markdown]
# ## ResNet-18
#
# The first stage keeps 56x56 (it follows a max-pooling); each later stage
# starts with a strided residual block and halves it.
#
# 第一个阶段保持 56x56（它接在最大汇聚层之后）；
# 之后每个阶段都以一个带步幅的残差块开始，把尺寸减半。

# %%
with notebooks.attempt("resnet18 / resnet_block"):
    table(m.resnet18(), (1, 224, 224, 1))

# %% [markdown]
# ## A narrow ResNet-18 on toy shapes（在玩具形状数据上训练一个窄的 ResNet-18）
#
# Widths (8, 16, 32, 64) on the 28x28 images. Keras's batch norm updates
# its moving averages slowly (`momentum=0.99`); PyTorch's default, which
# d2l uses, is 0.9 in Keras's terms. We take 0.9 so that after a few
# steps the averages used at test time (`training=False`) have caught up.
#
# 在 28x28 的图像上，宽度取 (8, 16, 32, 64)。Keras
# 的批量规范化更新滑动平均很慢（`momentum=0.99`）；d2l 用的 PyTorch 默认值换成
# Keras 的说法是 0.9。我们取 0.9，这样训练几步之后，测试时（`training=False`）
# 用的平均值就跟上来了。

# %%
steps = 20 if notebooks.short() else 94  # minibatches of 64 per epoch
epochs = 3 if notebooks.short() else 5
train, test = notebooks.toy_shapes(steps)

with notebooks.attempt("resnet18"):
    keras.utils.set_random_seed(0)
    net = m.resnet18(widths=(8, 16, 32, 64))
    notebooks.fit_and_show(
        net, train, epochs, test, lr=1e-2, batchnorm_momentum=0.9
    )

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("03")
