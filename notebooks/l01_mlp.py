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
# # Lesson 01: the multilayer perceptron (多层感知机)
#
# This notebook runs **your** `lessons/l01_mlp.py` (reloaded after each
# save); the last cell grades it like `m2t grade 01`.
#
# `H = relu(X W1 + b1)`, `O = H W2 + b2`: without the relu the two layers
# collapse into one affine map, and a line cannot separate two spirals.
#
# 这个笔记本运行**你的** `lessons/l01_mlp.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 01` 那样给它评分。`H = relu(X W1 + b1)`，`O = H
# W2 + b2`：没有 relu，两层就合成一个仿射变换，而一条直线分不开两条螺旋线。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf

from m2t.student import notebooks

m = notebooks.load("01")

# %% [markdown]
# ## ReLU

# %%
with notebooks.attempt("relu"):
    x = np.linspace(-4, 4, 81).astype("float32")
    plt.figure(figsize=(4, 2.6))
    plt.plot(x, np.asarray(m.relu(x)))
    plt.xlabel("x")
    plt.ylabel("relu(x)")
    plt.show()

# %% [markdown]
# ## Two spirals（两条螺旋线）
#
# Two classes wound around each other; an MLP with one hidden layer learns
# to tell them apart, a linear model cannot.
#
# 两个类别互相缠绕；一个隐藏层的多层感知机能学会把它们分开，线性模型做不到。

# %%
rng = np.random.default_rng(0)
n = 200
t = np.sqrt(rng.uniform(0.05, 1, n)) * 3 * np.pi
points = np.stack([t * np.cos(t), t * np.sin(t)], 1) / (3 * np.pi)
X = np.concatenate([points, -points]).astype("float32")
X += rng.normal(0, 0.03, X.shape).astype("float32")
y = np.concatenate([np.zeros(n), np.ones(n)]).astype("int32")


def train(model, steps):
    optimizer = keras.optimizers.Adam(0.01)
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(m.softmax_cross_entropy(model(X), y))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        losses.append(float(loss))
    return losses


# %%
with notebooks.attempt("MLP"):
    keras.utils.set_random_seed(0)
    steps = 40 if notebooks.short() else 400
    mlp = m.MLP(num_hiddens=64, num_outputs=2)
    linear = m.Linear(2)
    curves = {"MLP": train(mlp, steps), "linear": train(linear, steps)}
    fig, axes = plt.subplots(1, 3, figsize=(11, 3))
    for name, losses in curves.items():
        axes[0].plot(losses, label=name)
    axes[0].set_xlabel("step")
    axes[0].set_ylabel("cross-entropy")
    axes[0].legend()
    grid = np.stack(np.meshgrid(*[np.linspace(-1.2, 1.2, 80)] * 2), -1)
    grid = grid.reshape(-1, 2).astype("float32")
    for ax, (name, model) in zip(
        axes[1:], [("MLP", mlp), ("linear", linear)], strict=True
    ):
        p = keras.ops.convert_to_numpy(keras.ops.softmax(model(grid)))[:, 1]
        ax.contourf(*grid.T.reshape(2, 80, 80), p.reshape(80, 80), cmap="RdBu")
        ax.scatter(*X.T, c=y, s=4, cmap="RdBu_r")
        accuracy = (np.argmax(np.asarray(model(X)), 1) == y).mean()
        ax.set_title(f"{name}: accuracy {accuracy:.2f}")
    plt.show()

# %% [markdown]
# ## A stable cross-entropy（数值稳定的交叉熵）
#
# Large logits overflow a naive `exp`; the log-sum-exp trick keeps the loss
# finite.
#
# logits 很大时，朴素的 `exp` 会溢出；log-sum-exp 技巧让损失保持有限。

# %%
with notebooks.attempt("softmax_cross_entropy"):
    logits = np.array([[1000.0, 0.0], [0.0, -1000.0]], "float32")
    print(np.asarray(m.softmax_cross_entropy(logits, np.array([0, 1]))))

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("01")
