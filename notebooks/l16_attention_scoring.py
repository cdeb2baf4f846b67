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
# # Lesson 16: attention scoring functions (注意力评分函数)
#
# This notebook runs **your** `lessons/l16_attention_scoring.py`. Edit the
# file, save, and run the cells again: the module is reloaded whenever it
# changed. The last cell grades the lesson, as `m2t grade 16` does.
#
# Attention pools values with weights computed from a query and the keys,
# `alpha(q, k_i) = softmax_i(a(q, k_i))`. Keys past a sequence's valid length
# are masked (掩蔽): their weight is exactly 0.
#
# 这个笔记本运行**你的** `lessons/l16_attention_scoring.py`。编辑文件、保存，
# 再运行各单元格：模块一有改动就会重新加载。最后一个单元格像 `m2t grade 16`
# 那样给这一课评分。注意力用查询和键算出权重，再用权重汇聚值，`alpha(q, k_i) =
# softmax_i(a(q, k_i))`。超出序列有效长度的键被掩蔽：它们的权重恰好为 0。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("16")
rng = np.random.default_rng(0)
B, T, S, D, V = 2, 3, 5, 8, 6

# %% [markdown]
# ## Masked softmax（掩蔽 softmax）
#
# Random scores `(B, T, S)`; valid lengths per query `(B, T)`. Each row sums
# to 1 over its first `valid_len` keys, and the row with valid length 0 is all
# zeros, never uniform.
#
# 随机评分 `(B, T, S)`；每个查询的有效长度 `(B, T)`。每一行在它的前 `valid_len`
# 个键上求和为 1，有效长度为 0 的那一行全为零，绝不是均匀分布。

# %%
valid_lens = np.array([[1, 2, 5], [3, 0, 4]], dtype="int32")
scores = rng.standard_normal((B, T, S)).astype("float32")
with notebooks.attempt("masked_softmax"):
    weights = np.asarray(m.masked_softmax(scores, valid_lens))
    print("row sums:\n", weights.sum(-1).round(6))
    plots.heatmaps(weights[None], titles=[f"sequence {b}" for b in range(B)])
    plt.show()

# %% [markdown]
# ## Scaled dot-product attention (缩放点积注意力)
#
# `softmax(Q K^T / sqrt(d)) V`. Dividing by `sqrt(d)` keeps the scores'
# variance near 1; without it the softmax saturates as `d` grows. Compare the
# entropy of the weights with and without the scale.
#
# `softmax(Q K^T / sqrt(d)) V`。除以 `sqrt(d)` 让评分的方差保持在 1 附近；
# 不除的话，`d` 越大 softmax 越饱和。比较有缩放和没有缩放时注意力权重的熵。

# %%
with notebooks.attempt("DotProductAttention"):
    attention = m.DotProductAttention(dropout=0.0)
    queries = rng.standard_normal((B, T, D)).astype("float32")
    keys = rng.standard_normal((B, S, D)).astype("float32")
    values = rng.standard_normal((B, S, V)).astype("float32")
    out, w = attention(
        queries,
        keys,
        values,
        valid_lens=np.array([2, 5], dtype="int32"),
        return_attention_weights=True,
    )
    print("output shape:", tuple(out.shape))  # (B, T, V)
    plots.heatmaps(np.asarray(w)[None], titles=["valid_len 2", "valid_len 5"])
    plt.show()

# %%
with notebooks.attempt("DotProductAttention"):
    sizes = [4, 16, 64] if notebooks.short() else [4, 16, 64, 256, 1024]

    def entropy(p):
        return float(-(p * np.log(p + 1e-12)).sum(-1).mean())

    scaled, unscaled = [], []
    for d in sizes:
        q = rng.standard_normal((1, 16, d)).astype("float32")
        k = rng.standard_normal((1, 32, d)).astype("float32")
        _, w = attention(q, k, k, return_attention_weights=True)
        scaled.append(entropy(np.asarray(w)))
        raw = np.asarray(m.masked_softmax(q @ k.transpose(0, 2, 1)))
        unscaled.append(entropy(raw))
    plt.figure(figsize=(4.5, 3))
    plt.plot(sizes, scaled, "o-", label="q.k / sqrt(d)")
    plt.plot(sizes, unscaled, "s--", label="q.k")
    plt.xscale("log", base=2)
    plt.xticks(sizes, [str(d) for d in sizes])
    plt.minorticks_off()
    plt.axhline(np.log(32), color="grey", lw=0.8, label="uniform")
    plt.xlabel("d")
    plt.ylabel("entropy of the weights")
    plt.legend()
    plt.show()

# %% [markdown]
# ## Additive attention (加性注意力)
#
# `a(q, k) = w_v^T tanh(W_q q + W_k k)`: queries and keys may differ in size.
# With identical keys every valid key gets the same weight, whatever the
# query: the pooled value is the mean of the valid values.
#
# `a(q, k) = w_v^T tanh(W_q q + W_k k)`：查询和键的维数可以不同。
# 所有键都相同时，无论查询是什么，每个有效的键都得到相同的权重：
# 汇聚出的值就是有效值的平均。

# %%
with notebooks.attempt("AdditiveAttention"):
    additive = m.AdditiveAttention(num_hiddens=4, dropout=0.0)
    queries = rng.standard_normal((B, 1, 7)).astype("float32")
    keys = np.ones((B, 10, 8), dtype="float32")
    values = np.tile(
        np.arange(40, dtype="float32").reshape(1, 10, 4), (B, 1, 1)
    )
    out, w = additive(
        queries,
        keys,
        values,
        valid_lens=np.array([2, 6], dtype="int32"),
        return_attention_weights=True,
    )
    print("pooled values:\n", np.asarray(out).round(3))
    plots.heatmaps(np.asarray(w)[None], titles=["valid_len 2", "valid_len 6"])
    plt.show()

# %% [markdown]
# ## Grade（评分）
#
# The same checks as `m2t grade 16`, run in this kernel.
#
# 与 `m2t grade 16` 相同的检查，在这个内核里运行。

# %%
result = notebooks.grade("16")
