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
# # Lesson 04: DenseNet (稠密连接网络)
#
# This notebook runs **your** `lessons/l04_densenet.py` (reloaded after each
# save); the last cell grades it like `m2t grade 04`.
#
# Where ResNet adds a block's input to its output, DenseNet concatenates
# them on the channel axis: every later layer sees all earlier features.
# The channels grow by the growth rate (增长率) with each ConvBlock, and a
# transition block (过渡层) cuts them back and halves the image.
#
# 这个笔记本运行**你的** `lessons/l04_densenet.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 04` 那样给它评分。ResNet 把块的输入加到输出上，
# DenseNet 则在通道轴上把它们连结起来：后面的每一层都能看到前面所有的特征。
# 每经过一个 ConvBlock，通道数就增加一个增长率，而过渡层把通道削减回来，
# 并把图像减半。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t.student import notebooks

m = notebooks.load("04")
rng = np.random.default_rng(0)

# %% [markdown]
# ## Dense block and transition block（稠密块和过渡层）
#
# `DenseBlock(2, 10)` on 3 channels: 3 + 2 * 10 = 23 channels. The first 3
# output channels are the input itself, untouched: concatenation keeps it.
#
# `DenseBlock(2, 10)` 作用于 3 个通道：3 + 2 * 10 = 23 个通道。输出的前 3
# 个通道就是输入本身，原封不动：连结保留了它。

# %%
with notebooks.attempt("DenseBlock / ConvBlock"):
    x = rng.standard_normal((4, 8, 8, 3)).astype("float32")
    y = np.asarray(m.DenseBlock(2, 10)(x))
    print("DenseBlock(2, 10):     ", x.shape, "->", y.shape)
    print("first 3 channels == input:", np.allclose(y[..., :3], x))
with notebooks.attempt("TransitionBlock"):
    y = rng.standard_normal((4, 8, 8, 23)).astype("float32")
    z = m.TransitionBlock(10)(y)
    print("TransitionBlock(10):   ", y.shape, "->", tuple(z.shape))

# %% [markdown]
# What each ConvBlock of `DenseBlock(4, 32)` reads, on a 64-channel input:
# ConvBlock `i` sees the input and the outputs of ConvBlocks `1 .. i - 1`,
# `64 + (i - 1) * 32` channels.
#
# 在 64 个通道的输入上，`DenseBlock(4, 32)` 的每个 ConvBlock 读入什么：
# ConvBlock `i` 看到输入以及 ConvBlock `1 .. i - 1` 的输出，共 `64 + (i - 1) *
# 32` 个通道。

# %%
with notebooks.attempt("DenseBlock"):
    block = m.DenseBlock(4, 32)
    block(np.zeros((1, 4, 4, 64), "float32"))
    reads = [b.conv.kernel.shape[2] for b in block.conv_blocks]
    plt.figure(figsize=(6, 2.2))
    for i, c_in in enumerate(reads):
        parts = [64] + [32] * ((c_in - 64) // 32)
        plt.barh(
            i,
            parts,
            left=np.cumsum([0] + parts[:-1]),
            color=["grey"] + [f"C{k}" for k in range(len(parts) - 1)],
            edgecolor="white",
        )
        for k, start in enumerate(np.cumsum([0] + parts[:-1])):
            name = "x" if k == 0 else f"out {k}"
            plt.text(start + parts[k] / 2, i, name, ha="center", va="center")
    plt.yticks(range(len(reads)), [f"ConvBlock {i + 1}" for i in range(4)])
    plt.gca().invert_yaxis()
    plt.xlabel("input channels (x: the block's input; out k: ConvBlock k)")
    plt.show()

# %% [markdown]
# ## DenseNet
#
# On a 96x96 image: the stem takes it to 24x24 with 64 channels; each dense
# block adds 4 * 32 = 128 channels, each transition block halves them and
# the image.
#
# 在 96x96 的图像上：起始部分把它变成 24x24、64 个通道；每个稠密块增加 4 * 32 =
# 128 个通道，每个过渡层把通道数和图像都减半。

# %%
with notebooks.attempt("densenet"):
    net = m.densenet()
    x = keras.Input(batch_shape=(1, 96, 96, 1))
    names, shapes = [], []
    print(f"{'layer':<24}{'output shape':>20}")
    for layer in net.layers:
        x = layer(x)
        names.append(type(layer).__name__)
        shapes.append(tuple(x.shape))
        print(f"{names[-1]:<24}{str(shapes[-1]):>20}")
    params = sum(int(np.prod(w.shape)) for w in net.trainable_weights)
    print(f"trainable parameters: {params:,}")
    rows = [(n, s) for n, s in zip(names, shapes, strict=True) if len(s) == 4]
    rows = rows[: [n for n, _ in rows].index("BatchNormalization")]
    colors = {"DenseBlock": "C0", "TransitionBlock": "C1"}
    plt.figure(figsize=(7, 2.8))
    plt.bar(
        range(len(rows)),
        [s[-1] for _, s in rows],
        color=[colors.get(n, "grey") for n, _ in rows],
    )
    for i, (_, s) in enumerate(rows):
        plt.text(i, s[-1] + 4, f"{s[1]}x{s[2]}", ha="center", fontsize=8)
    plt.xticks(
        range(len(rows)),
        ["stem"] + [n.replace("Block", "") for n, _ in rows[1:]],
        rotation=30,
        fontsize=8,
    )
    plt.ylabel("channels")
    plt.ylim(0, 1.15 * max(s[-1] for _, s in rows))
    plt.title("channels and size after each stage")
    plt.show()

# %% [markdown]
# ## A narrow DenseNet on toy shapes（在玩具形状数据上训练一个窄的 DenseNet）
#
# 16 stem channels, growth rate 8 and three dense blocks of two ConvBlocks,
# on the 28x28 images (28 -> 7 after the stem, then 3, then 1). As in
# lesson 03 the batch norms average their statistics with momentum 0.9
# (PyTorch's default) so that a short training is enough for
# `training=False`.
#
# 起始部分 16 个通道，增长率 8，三个各含两个 ConvBlock 的稠密块，在 28x28
# 的图像上（起始部分之后 28 -> 7，然后 3，然后 1）。和第 03 课一样，
# 批量规范化用动量 0.9（PyTorch 的默认值）平均统计量，
# 这样短时间的训练就足以用于 `training=False`。

# %%
steps = 20 if notebooks.short() else 94  # minibatches of 64 per epoch
epochs = 3 if notebooks.short() else 5
train, test = notebooks.toy_shapes(steps)

with notebooks.attempt("densenet"):
    keras.utils.set_random_seed(0)
    net = m.densenet(num_channels=16, growth_rate=8, arch=(2, 2, 2))
    notebooks.fit_and_show(
        net, train, epochs, test, lr=1e-2, batchnorm_momentum=0.9
    )

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("04")
