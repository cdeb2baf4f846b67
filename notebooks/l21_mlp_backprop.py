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
# # Lesson 21: backpropagation by hand (手写反向传播)
#
# This notebook runs **your** `lessons/l21_mlp_backprop.py` (reloaded after
# each save); the last cell grades it like `m2t grade 21`.
#
# Lesson 01's MLP, trained with **your** gradients and nothing else: no
# tape, no optimizer, just `W <- W - lr * dW` in NumPy.
#
# 这个笔记本运行**你的** `lessons/l21_mlp_backprop.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 21` 那样给它评分。第 01 课的多层感知机，
# 只用**你的**梯度训练：没有梯度带，没有优化器，只有 NumPy 中的 `W <- W - lr *
# dW`。

# %%
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf

from m2t.student import notebooks

m = notebooks.load("21")

# %% [markdown]
# ## Your gradients against a tape（你的梯度与梯度带对比）
#
# The same forward pass in TensorFlow, differentiated by `tf.GradientTape`:
# the largest difference per weight should be around 1e-16.
#
# 同样的前向计算用 TensorFlow 写，由 `tf.GradientTape` 求导：
# 每个权重上的最大差异应在 1e-16 左右。

# %%
rng = np.random.default_rng(0)
B, D, HD, Q = 8, 5, 16, 3
params = {
    "W1": rng.normal(0, 0.5, (D, HD)),
    "b1": np.zeros(HD),
    "W2": rng.normal(0, 0.5, (HD, Q)),
    "b2": np.zeros(Q),
}
X, y = rng.normal(size=(B, D)), rng.integers(0, Q, B)

with notebooks.attempt("mlp_loss_and_grads"):
    loss, grads = m.mlp_loss_and_grads(X, y, params)
    weights = {k: tf.Variable(v) for k, v in params.items()}
    with tf.GradientTape() as tape:
        H = tf.nn.relu(X @ weights["W1"] + weights["b1"])
        logits = H @ weights["W2"] + weights["b2"]
        tape_loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
        )
    tape_grads = tape.gradient(tape_loss, weights)
    print(f"loss: yours {loss:.6f}, the tape's {float(tape_loss):.6f}")
    for k in params:
        diff = np.abs(grads[k] - tape_grads[k].numpy()).max()
        print(f"d{k} {grads[k].shape}: max |yours - tape| = {diff:.2e}")

# %% [markdown]
# ## Your gradient check（你的梯度检查）
#
# CS231n's check, with **your** `gradient_check`: the relative error of your
# analytic gradient against centred differences of your own loss, for each
# weight. Around 1e-7 or less is right; above 1e-2 is a bug.
#
# CS231n 的做法，用**你的** `gradient_check`：把你的解析梯度与你自己的损失的中心
# 差分比较，逐个权重给出相对误差。1e-7 左右或更小就对了；高于 1e-2 就有错。

# %%
with notebooks.attempt("gradient_check"):
    for k in params:

        def loss_of(w, k=k):
            return m.mlp_loss_and_grads(X, y, {**params, k: w})[0]

        ok, error = m.gradient_check(loss_of, params[k].copy(), grads[k])
        print(f"d{k}: relative error {error:.1e} ({'ok' if ok else 'CHECK'})")

# %% [markdown]
# ## Training on two spirals with your backward pass（用你的反向传播训练）

# %%
n = 150
t = np.sqrt(rng.uniform(0.05, 1, n)) * 3 * np.pi
points = np.stack([t * np.cos(t), t * np.sin(t)], 1) / (3 * np.pi)
Xs = np.concatenate([points, -points]) + rng.normal(0, 0.03, (2 * n, 2))
ys = np.concatenate([np.zeros(n), np.ones(n)]).astype(int)

with notebooks.attempt("mlp_loss_and_grads"):
    steps = 200 if notebooks.short() else 3000
    net = {
        "W1": rng.normal(0, 1.0, (2, 64)),
        "b1": np.zeros(64),
        "W2": rng.normal(0, 0.1, (64, 2)),
        "b2": np.zeros(2),
    }
    losses = []
    for _ in range(steps):
        loss, grads = m.mlp_loss_and_grads(Xs, ys, net)
        for k in net:
            net[k] -= 0.5 * grads[k]
        losses.append(loss)
    plt.figure(figsize=(5, 3))
    plt.plot(losses)
    plt.xlabel("step")
    plt.ylabel("mean cross-entropy")
    plt.title("gradient descent with your gradients")
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("21")
