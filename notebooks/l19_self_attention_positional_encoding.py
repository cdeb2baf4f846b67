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
# # Lesson 19: self-attention and positional encoding (自注意力和位置编码)
#
# This notebook runs **your** lesson file,
# `lessons/l19_self_attention_positional_encoding.py` (reloaded after each
# save); the last cell grades it like `m2t grade 19`.
#
# Self-attention has no notion of order, so the order is added to the input:
# `X + P`, with interleaved sines and cosines,
# `P[i, 2j] = sin(i w_j)`, `P[i, 2j+1] = cos(i w_j)`, `w_j = 1/10000^(2j/D)`.
#
# 这个笔记本运行**你的**课程文件
# `lessons/l19_self_attention_positional_encoding.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 19` 那样给它评分。自注意力没有顺序的概念，
# 所以要把顺序加到输入上：`X + P`，正弦和余弦交错排列，`P[i, 2j] = sin(i
# w_j)`，`P[i, 2j+1] = cos(i w_j)`，`w_j = 1/10000^(2j/D)`。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("19")
max_len, D = (60, 32) if notebooks.short() else (100, 64)

# %% [markdown]
# ## The table（位置编码表）
#
# Rows are positions, columns encoding dimensions. The frequency falls along
# the columns: the left columns change fast, the right ones slowly, like the
# bits of a binary counter.
#
# 行是位置，列是编码维度。频率沿着列递减：左边的列变化快，右边的列变化慢，
# 就像二进制计数器的各个位。

# %%
with notebooks.attempt("positional_encoding_table"):
    P = np.asarray(m.positional_encoding_table(max_len, D))
    print("position 0:", P[0, :8].round(3))  # [0, 1, 0, 1, ...]
    plots.heatmaps(
        P,
        xlabel="encoding dimension",
        ylabel="position",
        diverging=True,  # values in [-1, 1]
        figsize=(6, 4),
    )
    plt.show()
    plt.figure(figsize=(6, 3))
    for col in (6, 7, 8, 9):
        plt.plot(P[:, col], label=f"column {col}")
    plt.xlabel("position")
    plt.legend()
    plt.show()

# %% [markdown]
# ## Neighbours look alike（相邻的位置看起来很像）
#
# The cosine similarity of the encodings of positions `i` and `i + 1` is the
# same for every `i` (an experiment of the question list): it depends only on
# the offset.
#
# 位置 `i` 和 `i + 1` 的编码的余弦相似度对每个 `i`
# 都一样（问题清单中的一个实验）：它只取决于偏移量。

# %%
with notebooks.attempt("positional_encoding_table"):
    unit = P / np.linalg.norm(P, axis=1, keepdims=True)
    similarity = unit @ unit.T
    print(
        "cos(P[i], P[i+1]) for i = 0..4:", np.diag(similarity, 1)[:5].round(4)
    )
    plots.heatmaps(
        similarity,
        xlabel="position",
        ylabel="position",
        cmap="viridis",
        figsize=(4.5, 3.6),
    )
    plt.show()

# %% [markdown]
# ## An offset is a rotation（偏移就是旋转）
#
# `P[i + d] = P[i] @ M(d)`, with `M(d)` block diagonal: the same matrix for
# every position. Attention can therefore learn relative positions.
#
# `P[i + d] = P[i] @ M(d)`，`M(d)` 是块对角矩阵：对每个位置都是同一个矩阵。
# 因此注意力能够学到相对位置。

# %%
with notebooks.attempt("relative_shift"):
    delta = 3
    M = np.asarray(m.relative_shift(delta, D))
    error = np.abs(P[:-delta] @ M - P[delta:]).max()
    print(f"max |P[i] M({delta}) - P[i + {delta}]| = {error:.2e}")
    plots.heatmaps(M[:8, :8], xlabel="column", ylabel="row", diverging=True)
    plt.show()

# %% [markdown]
# ## The layer（这一层）
#
# `PositionalEncoding` adds the first `T` rows of the table to its input
# (then dropout): on zeros it returns the table itself.
#
# `PositionalEncoding` 把表的前 `T` 行加到输入上（然后做暂退法）：
# 输入全为零时，它返回的就是表本身。

# %%
with notebooks.attempt("PositionalEncoding"):
    layer = m.PositionalEncoding(D, dropout=0.0, max_len=max_len)
    out = np.asarray(layer(np.zeros((2, 10, D), "float32")))
    print("output", out.shape, "equals P[:10]:", np.allclose(out[0], P[:10]))

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("19")
