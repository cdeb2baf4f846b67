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
# # Lesson 10: gated recurrent units (门控循环单元)
#
# This notebook runs **your** `lessons/l10_gru.py` (reloaded after each
# save); the last cell grades it like `m2t grade 10`.
#
# The update gate (更新门) `z` decides how much of the old state to keep,
# the reset gate (重置门) `r` how much of it feeds the candidate state:
# `h = z * h_prev + (1 - z) * h_cand`.
#
# 这个笔记本运行**你的** `lessons/l10_gru.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 10` 那样给它评分。更新门 `z`
# 决定保留多少旧的隐状态，重置门 `r` 决定旧的隐状态有多少进入候选隐状态：`h = z
# * h_prev + (1 - z) * h_cand`。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("10")
rng = np.random.default_rng(0)
B, T, D, U = 1, 40, 3, 8

# %% [markdown]
# ## The same numbers as Keras's GRU（与 Keras 的 GRU 数值相同）
#
# Copy the weights into `keras.layers.GRU(reset_after=False)` (same
# `[z | r | h]` layout) and compare the hidden states step by step.
#
# 把权重复制到 `keras.layers.GRU(reset_after=False)` 中（同样的 `[z | r | h]`
# 布局），逐步比较隐状态。

# %%
with notebooks.attempt("GRUCell"):
    keras.utils.set_random_seed(0)
    x = rng.standard_normal((B, T, D)).astype("float32")
    ours = keras.layers.RNN(m.GRUCell(U), return_sequences=True)
    ref = keras.layers.GRU(U, reset_after=False, return_sequences=True)
    h_ours, h_ref = ours(x), ref(x)
    ref.set_weights(ours.get_weights())
    h_ours, h_ref = np.asarray(ours(x)), np.asarray(ref(x))
    print("max |ours - keras| =", float(np.abs(h_ours - h_ref).max()))
    plots.heatmaps(
        h_ours[0].T,
        xlabel="time step",
        ylabel="hidden unit",
        diverging=True,
        figsize=(7, 2.8),
    )
    plt.show()

# %% [markdown]
# ## Memory（记忆）
#
# One pulse at step 5, zeros after it: the gates let the state decay
# slowly instead of vanishing at once. A larger update-gate bias keeps the
# memory longer.
#
# 第 5 步一个脉冲，之后全是零：门让隐状态缓慢衰减，而不是立刻消失。
# 更新门的偏置越大，记忆保持得越久。

# %%
with notebooks.attempt("GRUCell"):
    pulse = np.zeros((1, T, D), "float32")
    pulse[0, 5] = 3.0
    plt.figure(figsize=(6, 3))
    for bias in (0.0, 2.0):
        layer = keras.layers.RNN(m.GRUCell(U), return_sequences=True)
        layer(pulse)
        kernel, recurrent, b = layer.get_weights()
        b[:U] = bias  # the update gate's block [z | r | h]
        layer.set_weights([kernel, recurrent, b])
        h = np.asarray(layer(pulse))[0]
        plt.plot(np.linalg.norm(h, axis=1), label=f"z bias {bias:g}")
    plt.axvline(5, color="grey", lw=0.8)
    plt.xlabel("time step")
    plt.ylabel("|h_t|")
    plt.legend()
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("10")
