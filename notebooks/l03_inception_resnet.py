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
# ## One Inception block
#
# Every path keeps height and width; the 1x1 convolutions in front of the
# 3x3 and 5x5 ones cut 192 channels to 96 and 16 first, which keeps the
# block cheap. The output has `64 + 128 + 32 + 32 = 256` channels.

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
# ## Residual blocks
#
# Without a 1x1 convolution the shapes must match: the input is added as
# it is. With `use_1x1conv=True, strides=2` the shortcut is a strided 1x1
# convolution, so it halves the size and changes the channels the same way
# the main path does.

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

# %%
with notebooks.attempt("resnet18 / resnet_block"):
    table(m.resnet18(), (1, 224, 224, 1))

# %% [markdown]
# ## A narrow ResNet-18 on toy shapes
#
# Widths (8, 16, 32, 64) on the 28x28 images. Keras's batch norm updates
# its moving averages slowly (`momentum=0.99`); PyTorch's default, which
# d2l uses, is 0.9 in Keras's terms. We take 0.9 so that after a few
# steps the averages used at test time (`training=False`) have caught up.

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
# ## Grade

# %%
result = notebooks.grade("03")
