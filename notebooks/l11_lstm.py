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
# # Lesson 11: long short-term memory (长短期记忆网络)
#
# This notebook runs **your** `lessons/l11_lstm.py` (reloaded after each
# save); the last cell grades it like `m2t grade 11`.
#
# Gates: input `i`, forget `f`, output `o`; candidate memory `c_cand`.
# `c = f * c_prev + i * c_cand`, `h = o * tanh(c)`: the memory cell carries
# information across many steps when `f` stays near 1.
#
# 这个笔记本运行**你的** `lessons/l11_lstm.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 11` 那样给它评分。门：输入门 `i`、遗忘门 `f`、
# 输出门 `o`；候选记忆元 `c_cand`。`c = f * c_prev + i * c_cand`，`h = o *
# tanh(c)`：`f` 保持在 1 附近时，记忆元能把信息携带很多步。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("11")
rng = np.random.default_rng(0)
B, T, D, U = 1, 40, 3, 8

# %% [markdown]
# ## The same numbers as Keras's LSTM（与 Keras 的 LSTM 数值相同）
#
# Same weight layout, blocks `[i | f | c | o]`: copy the weights into
# `keras.layers.LSTM` and compare the hidden states.
#
# 同样的权重布局，分块为 `[i | f | c | o]`：把权重复制到 `keras.layers.LSTM`
# 中，比较隐状态。

# %%
with notebooks.attempt("LSTMCell"):
    x = rng.standard_normal((B, T, D)).astype("float32")
    ours = keras.layers.RNN(m.LSTMCell(U), return_sequences=True)
    ref = keras.layers.LSTM(U, return_sequences=True)
    ours(x), ref(x)
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
# ## The memory cell keeps a pulse（记忆元留住一个脉冲）
#
# One pulse at step 5, zeros after it. With the forget gate's bias raised,
# the memory `c` decays slowly; `h = o * tanh(c)` follows it.
#
# 第 5 步一个脉冲，之后全是零。把遗忘门的偏置调高，记忆元 `c` 就衰减得很慢；`h
# = o * tanh(c)` 跟着它变化。

# %%
with notebooks.attempt("LSTMCell"):
    pulse = np.zeros((1, T, D), "float32")
    pulse[0, 5] = 3.0
    plt.figure(figsize=(6, 3))
    for bias in (0.0, 3.0):
        layer = keras.layers.RNN(
            m.LSTMCell(U), return_sequences=True, return_state=True
        )
        layer(pulse)
        kernel, recurrent, b = layer.get_weights()
        b[U : 2 * U] = bias  # the forget gate's block of [i | f | c | o]
        layer.set_weights([kernel, recurrent, b])
        norms = []
        state = None
        for t in range(T):
            _, h, c = layer(pulse[:, t : t + 1], initial_state=state)
            state = [h, c]
            norms.append(float(np.linalg.norm(np.asarray(c))))
        plt.plot(norms, label=f"forget bias {bias:g}")
    plt.axvline(5, color="grey", lw=0.8)
    plt.xlabel("time step")
    plt.ylabel("|c_t|")
    plt.legend()
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("11")
