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
# # Lesson 09: a concise RNN (循环神经网络的简洁实现)
#
# This notebook runs **your** `lessons/l09_rnn_concise.py` (reloaded after
# each save); the last cell grades it like `m2t grade 09`.
#
# Lesson 08's language model from Keras layers: one-hot (or an embedding)
# -> `SimpleRNN(return_sequences=True, return_state=True)` -> `Dense(V)`.
# `fit` trains it, and the optimizer clips the gradients itself.
#
# 这个笔记本运行**你的** `lessons/l09_rnn_concise.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 09` 那样给它评分。用 Keras 的层搭出第 08
# 课的语言模型：独热编码（或嵌入层）-> `SimpleRNN(return_sequences=True,
# return_state=True)` -> `Dense(V)`。用 `fit` 训练，梯度裁剪由优化器自己完成。

# %%
import math

import keras
import matplotlib.pyplot as plt
import numpy as np

import m2t_data
from m2t.student import notebooks

m = notebooks.load("09")
text = " ".join(line for line in m2t_data.time_machine_lines() if line)
vocab = sorted(set(text))  # a space and a-z
V = len(vocab)
lookup = {c: i for i, c in enumerate(vocab)}
corpus = np.array([lookup[c] for c in text], dtype="int32")
rng = np.random.default_rng(0)

# %% [markdown]
# ## Shapes（形状）
#
# Every step's hidden state becomes a row of logits; the state after the
# last step comes back too. With `embedding_dim` an `Embedding(V, E)`
# replaces the one-hot vectors: the same row lookup, with `E` chosen
# freely.
#
# 每一步的隐状态变成一行 logits；最后一步之后的状态也一并返回。给了
# `embedding_dim` 时，`Embedding(V, E)` 取代独热向量：同样是按行查表，`E`
# 可以随意选择。

# %%
with notebooks.attempt("RNNModel"):
    X = rng.integers(0, V, (4, 35))
    for embedding_dim in (None, 16):
        layer = m.RNNModel(V, 64, embedding_dim=embedding_dim)
        logits, state = layer(X)
        print(
            f"embedding_dim={embedding_dim}: logits {tuple(logits.shape)},"
            f" state {tuple(state.shape)}"
        )
        print("   rnn weights:", [tuple(w.shape) for w in layer.rnn.weights])

# %% [markdown]
# ## The state carries across calls（隐状态在调用之间传递）
#
# Run 30 steps at once, or as two calls of 15 steps with the first call's
# state passed to the second: the logits agree up to float rounding. Drop
# the state and the second call starts from zeros, as if the first 15
# characters had never been read: its logits are off at every step.
#
# 一次运行 30 步，或者分两次各运行 15 步、把第一次的状态传给第二次：两者的
# logits 在浮点舍入误差内一致。丢掉这个状态，第二次调用就从零开始，仿佛前 15
# 个字符从没读过：它每一步的 logits 都不对。

# %%
with notebooks.attempt("RNNModel"):
    keras.utils.set_random_seed(0)
    layer = m.RNNModel(V, 64)
    X = rng.integers(0, V, (1, 30))
    whole, _ = layer(X)
    first, state = layer(X[:, :15])
    carried, _ = layer(X[:, 15:], state)
    dropped, _ = layer(X[:, 15:])
    whole = np.asarray(whole)[0, 15:]
    plt.figure(figsize=(5, 2.8))
    for name, part in (
        ("state passed on", carried),
        ("state dropped", dropped),
    ):
        gap = np.abs(np.asarray(part)[0] - whole).max(axis=-1)
        plt.semilogy(range(15, 30), np.maximum(gap, 1e-8), "o-", label=name)
    plt.xlabel("time step")
    plt.ylabel("max |logits - one call|")
    plt.legend()
    plt.show()

# %% [markdown]
# ## Training with `fit`（用 `fit` 训练）
#
# Random sampling: non-overlapping windows of 35 characters, shuffled by
# `fit`. `global_clipnorm=1` is lesson 08's `grad_clipping` (`clipnorm`
# would clip each weight's gradient by its own norm). The loss takes
# logits; the perplexity is `exp(loss)`.
#
# 随机采样：35 个字符的互不重叠的窗口，由 `fit` 打乱顺序。`global_clipnorm=1`
# 就是第 08 课的 `grad_clipping`（`clipnorm`
# 会让每个权重的梯度按它自己的范数分别裁剪）。损失接受 logits；困惑度是
# `exp(loss)`。

# %%
T = 35
windows = corpus[: (len(corpus) - 1) // T * T + 1]
X_all = windows[:-1].reshape(-1, T)
Y_all = windows[1:].reshape(-1, T)
n = 1600 if notebooks.short() else len(X_all)
epochs = 3 if notebooks.short() else 10

model = None
with notebooks.attempt("RNNModel"):
    keras.utils.set_random_seed(0)
    model = m.language_model(V, 128 if notebooks.short() else 256)
    model.compile(
        optimizer=keras.optimizers.SGD(1.0, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(
        X_all[:n], Y_all[:n], batch_size=32, epochs=epochs, verbose=0
    )
    curve = [math.exp(loss) for loss in history.history["loss"]]
    print("perplexity per epoch:", np.round(curve, 2))
    notebooks.perplexity_curve(curve, V)

# %% [markdown]
# ## Generating text（生成文本）
#
# The warm-up reads the whole prefix in one call (the layer loops over the
# steps itself); then each call reads one character, greedily chosen, and
# the state is passed on every time.
#
# 预热期一次调用就读完整个前缀（层自己在各时间步上循环）；
# 之后每次调用读一个贪心选出的字符，每次都把状态传下去。

# %%
if model is not None:
    lm = model.get_layer("lm")
    ids = [lookup[c] for c in "the keeper "]
    logits, state = lm(np.array([ids]), lm.begin_state(1))
    for _ in range(50):
        ids.append(int(np.argmax(logits[0, -1])))
        logits, state = lm(np.array([ids[-1:]]), state)
    print("".join(vocab[i] for i in ids))

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("09")
