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
# # Lesson 08: an RNN from scratch (循环神经网络的从零开始实现)
#
# This notebook runs **your** `lessons/l08_rnn_scratch.py` (reloaded after
# each save); the last cell grades it like `m2t grade 08`.
#
# A character-level language model. The hidden state (隐状态) carries what
# the network has read: `H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)`, and
# every step predicts the next character, `O_t = H_t W_hq + b_q`.
#
# 这个笔记本运行**你的** `lessons/l08_rnn_scratch.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 08` 那样给它评分。一个字符级语言模型。
# 隐状态记着网络读过的内容：`H_t = tanh(X_t W_xh + H_{t-1} W_hh + b_h)`，
# 每一步都预测下一个字符，`O_t = H_t W_hq + b_q`。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

import m2t_data
from m2t.student import notebooks

m = notebooks.load("08")
text = " ".join(line for line in m2t_data.time_machine_lines() if line)
vocab = sorted(set(text))  # a space and a-z; index = position in the list
V = len(vocab)
lookup = {c: i for i, c in enumerate(vocab)}
corpus = np.array([lookup[c] for c in text], dtype="int32")
print(f"{len(corpus):,} characters, V = {V}")

# %% [markdown]
# ## One-hot inputs（独热输入）
#
# Index `i` becomes the vector `e_i` of length `V`; `e_i W_xh` is simply
# row `i` of `W_xh`. Indices `(B, T)` give `(B, T, V)`.
#
# 索引 `i` 变成长度为 `V` 的向量 `e_i`；`e_i W_xh` 就是 `W_xh` 的第 `i` 行。
# 索引 `(B, T)` 给出 `(B, T, V)`。

# %%
with notebooks.attempt("one_hot"):
    word = "the keeper"
    X = np.array([[lookup[c] for c in word]])
    encoded = np.asarray(m.one_hot(X, V))
    print(X.shape, "->", encoded.shape)
    plt.figure(figsize=(6, 2.6))
    plt.imshow(encoded[0], cmap="Greys", aspect="auto")
    plt.yticks(range(len(word)), ["sp" if c == " " else c for c in word])
    plt.xticks(range(V), ["sp" if c == " " else c for c in vocab], fontsize=7)
    plt.xlabel("vocabulary index")
    plt.show()

# %% [markdown]
# ## Shapes, and the untrained model（形状，以及未训练的模型）
#
# With weights drawn from N(0, 0.01²) every logit is near 0, so the model
# guesses uniformly: its perplexity is about `V`.
#
# 权重从 N(0, 0.01²) 中抽取时，每个 logit 都接近 0，模型就是在均匀地猜：
# 它的困惑度约为 `V`。

# %%
num_hiddens = 128 if notebooks.short() else 256
with notebooks.attempt("RNNScratch"):
    keras.utils.set_random_seed(0)
    model = m.RNNScratch(V, num_hiddens)
    X, Y = corpus[:350].reshape(10, 35), corpus[1:351].reshape(10, 35)
    logits, state = model(X)
    print("logits", tuple(logits.shape), " state", tuple(state.shape))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    print(f"perplexity before training: {np.exp(float(loss(Y, logits))):.2f}")

# %% [markdown]
# ## Gradient clipping（梯度裁剪）
#
# All the gradients together, scaled so their joint norm is at most θ:
# small ones pass unchanged, large ones keep their direction and get
# norm θ.
#
# 把所有梯度合在一起缩放，使它们的联合范数至多为 θ：小的原样通过，
# 大的保持方向、范数变为 θ。

# %%
with notebooks.attempt("grad_clipping"):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s).astype("float32") for s in [(5, 3), (3,)]]
    norm = np.sqrt(sum((g**2).sum() for g in grads))
    scales = np.logspace(-2, 2, 30)
    after = []
    for scale in scales:
        clipped = m.grad_clipping([g * scale for g in grads], theta=1.0)
        after.append(
            np.sqrt(sum(float((np.asarray(c) ** 2).sum()) for c in clipped))
        )
    plt.figure(figsize=(4.5, 3))
    plt.loglog(scales * norm, after, "o-", ms=3, label="clipped")
    plt.loglog(scales * norm, scales * norm, "--", color="grey", label="as is")
    plt.xlabel("norm of all gradients")
    plt.ylabel("norm after clipping")
    plt.legend()
    plt.show()

# %% [markdown]
# ## A short training（一次简短的训练）
#
# Random sampling (lesson 07): non-overlapping windows of 35 characters in
# a shuffled order, each minibatch starting from a zero state. SGD with
# learning rate 1 and clipping at θ = 1. The short version sees only a
# slice of the corpus per epoch.
#
# 随机采样（第 07 课）：35 个字符的互不重叠的窗口，顺序打乱，
# 每个小批量从零状态开始。SGD，学习率 1，在 θ = 1 处做梯度裁剪。
# 简短版本每个迭代周期只看语料的一小段。

# %%
T, B = 35, 32
epochs = 3 if notebooks.short() else 5
per_epoch = 20 if notebooks.short() else None  # minibatches; None: all


def minibatches(seed):
    rng = np.random.default_rng(seed)
    offset = int(rng.integers(T))
    starts = offset + T * rng.permutation((len(corpus) - offset - 1) // T)
    count = len(starts) // B if per_epoch is None else per_epoch
    for i in range(count):
        s = starts[i * B : (i + 1) * B]
        yield (
            np.stack([corpus[j : j + T] for j in s]),
            np.stack([corpus[j + 1 : j + T + 1] for j in s]),
        )


with notebooks.attempt("predict / RNNScratch / grad_clipping"):
    print("before:", m.predict("the keeper ", 40, model, vocab))
    optimizer = keras.optimizers.SGD(1.0)
    curve = []
    for epoch in range(epochs):
        curve.append(m.train_epoch(model, minibatches(epoch), optimizer, 1.0))
    print("after: ", m.predict("the keeper ", 40, model, vocab))
    notebooks.perplexity_curve(curve, V)

# %% [markdown]
# Greedy prediction picks the most likely character each time; after a
# short training that is often a loop of frequent words. The full version
# (unset `M2T_SHORT`) trains longer and spells better.
#
# 贪心预测每次都选最可能的字符；训练时间短时，结果常常是几个高频词的循环。
# 完整版本（不设置 `M2T_SHORT`）训练得更久，拼写也更好。
#
# ## Grade（评分）

# %%
result = notebooks.grade("08")
