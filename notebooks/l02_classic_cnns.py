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
# # Lesson 02: AlexNet, VGG and NiN (深度卷积神经网络、VGG、NiN)
#
# This notebook runs **your** `lessons/l02_classic_cnns.py` (reloaded after
# each save); the last cell grades it like `m2t grade 02`.
#
# Three ways to stack convolutions. AlexNet is a deeper, wider LeNet. VGG
# (使用块的网络) repeats one block: 3x3 convolutions that keep the size,
# then one pooling that halves it. NiN (网络中的网络) drops the dense
# layers: its last block has one channel per class, averaged over the
# image.
#
# 这个笔记本运行**你的** `lessons/l02_classic_cnns.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 02` 那样给它评分。堆叠卷积的三种方式。AlexNet
# 是更深、更宽的 LeNet。VGG 重复同一个块：几个保持尺寸的 3x3 卷积，
# 再接一个把尺寸减半的汇聚层。NiN 去掉了全连接层：
# 它最后一个块每个类别一个通道，在整张图上取平均。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t.student import notebooks

m = notebooks.load("02")


def table(net, input_shape):
    """Print each top-level layer's output shape and parameter count, from
    a symbolic batch (no data goes through)."""
    x = keras.Input(batch_shape=input_shape)
    rows = []
    print(f"{'layer':<22}{'output shape':>20}{'parameters':>14}")
    for layer in net.layers:
        x = layer(x)
        rows.append((type(layer).__name__, layer.count_params()))
        shape = str(tuple(x.shape))
        print(f"{rows[-1][0]:<22}{shape:>20}{rows[-1][1]:>14,}")
    print(f"{'total':<42}{sum(n for _, n in rows):>14,}\n")
    return rows


# %% [markdown]
# ## Feature-map shapes, layer by layer（逐层的特征图形状）
#
# On one 224x224 grey image. A window `k` with stride `s` on `n` pixels
# gives `floor((n - k) / s) + 1` outputs with padding "valid" and
# `ceil(n / s)` with "same": AlexNet's 11x11/4 convolution maps 224 to 54,
# each 3x3/2 pooling then 54 -> 26 -> 12 -> 5. A fused ReLU is part of its
# layer's row here.
#
# 输入一张 224x224 的灰度图。窗口 `k`、步幅 `s` 作用于 `n` 个像素时，"valid"
# 填充给出 `floor((n - k) / s) + 1` 个输出，"same" 给出 `ceil(n / s)` 个：
# AlexNet 的 11x11/4 卷积把 224 变成 54，之后每个 3x3/2 的汇聚层依次 54 -> 26
# -> 12 -> 5。融合在层里的 ReLU 在这里算作该层的一行。

# %%
params = {}
with notebooks.attempt("alexnet"):
    print("AlexNet")
    params["AlexNet"] = table(m.alexnet(), (1, 224, 224, 1))
with notebooks.attempt("vgg / vgg_block"):
    print("VGG-11: one row per block")
    params["VGG-11"] = table(m.vgg(), (1, 224, 224, 1))
with notebooks.attempt("nin / nin_block"):
    print("NiN")
    params["NiN"] = table(m.nin(), (1, 224, 224, 1))

# %% [markdown]
# ## Where the parameters are（参数在哪里）
#
# A convolution has `k*k*C_in*C_out + C_out` parameters, a dense layer
# `D_in*D_out + D_out`. The first dense layer after Flatten dwarfs every
# convolution; NiN has no dense layer and about 2 million parameters in
# all.
#
# 卷积层有 `k*k*C_in*C_out + C_out` 个参数，全连接层有 `D_in*D_out + D_out`
# 个。Flatten 之后的第一个全连接层比所有卷积层加起来都大得多；NiN
# 没有全连接层，总共约 200 万个参数。

# %%
if params:
    fig, axes = plt.subplots(1, len(params), figsize=(11, 3), sharex=True)
    axes = np.atleast_1d(axes)
    for ax, (name, rows) in zip(axes, params.items(), strict=True):
        rows = [(kind, n) for kind, n in rows if n > 0]
        kinds = [{"Sequential": "block"}.get(k, k.lower()) for k, _ in rows]
        labels = [f"{k} {kinds[: i + 1].count(k)}" for i, k in enumerate(kinds)]
        colors = ["C1" if kind == "dense" else "C0" for kind in kinds]
        ax.barh(range(len(rows)), [n for _, n in rows], color=colors)
        ax.set_yticks(range(len(rows)), labels)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_title(f"{name}: {sum(n for _, n in rows) / 1e6:.1f}M")
        ax.set_xlabel("parameters")
    fig.tight_layout()
    plt.show()

# %% [markdown]
# ## A narrow AlexNet on toy shapes（在玩具形状数据上训练一个窄的 AlexNet）
#
# The same function with small widths trains in seconds on the CPU. The
# 28x28 `toy_shapes` images are resized to 68x68: below 67 pixels the
# third pooling would have nothing left to pool.
#
# 同一个函数，宽度取小一些，在 CPU 上几秒就能训练完。28x28 的 `toy_shapes`
# 图像放大到 68x68：小于 67 个像素时，第三个汇聚层就没有东西可汇聚了。

# %%
size = 68
steps = 30 if notebooks.short() else 94  # minibatches of 64 per epoch
epochs = 2 if notebooks.short() else 5
train, (x_test, y_test) = notebooks.toy_shapes(steps, resize=size)

net = None
with notebooks.attempt("alexnet"):
    keras.utils.set_random_seed(0)
    net = m.alexnet(widths=(16, 32, 48, 48, 32), num_hiddens=64, dropout=0.1)
    notebooks.fit_and_show(net, train, epochs, (x_test, y_test), lr=1e-3)

# %% [markdown]
# ## What the first convolution sees（第一个卷积层看到了什么）
#
# The first layer's 16 channels on one test image: each 11x11 filter with
# stride 4 gives a 15x15 map, bright where its pattern matches (an edge
# direction, a blob).
#
# 第一层的 16 个通道作用于一张测试图像：每个 11x11、步幅 4 的卷积核给出一张
# 15x15 的图，与它的模式（某个边缘方向、一个斑点）吻合处就亮。

# %%
if net is not None:
    maps = np.asarray(net.layers[0](x_test[:1]))[0]  # (15, 15, 16)
    fig, axes = plt.subplots(2, 9, figsize=(11, 2.8))
    axes[0, 0].imshow(x_test[0, ..., 0], cmap="gray")
    axes[0, 0].set_title("input", fontsize=9)
    axes[1, 0].axis("off")
    for c, ax in enumerate(axes[:, 1:].flat):
        ax.imshow(maps[..., c], cmap="viridis")
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    print("feature maps:", maps.shape)
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("02")
