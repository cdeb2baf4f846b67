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
# # Lesson 18: multi-head attention (多头注意力)
#
# This notebook runs **your** `lessons/l18_multihead_attention.py` (reloaded
# after each save); the last cell grades it like `m2t grade 18`.
#
# `D` is split into `H` heads of `Dk = D/H`; each head attends on its own
# projections, scaled by `1/sqrt(Dk)`, and `W_o` mixes the heads back.
#
# 这个笔记本运行**你的**
# `lessons/l18_multihead_attention.py`（每次保存后重新加载）；最后一个单元格像
# `m2t grade 18` 那样给它评分。`D` 分成 `H` 个头，每个 `Dk = D/H` 维；
# 每个头在自己的投影上做注意力，按 `1/sqrt(Dk)` 缩放，`W_o`
# 再把各个头融合回来。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("18")
rng = np.random.default_rng(0)
B, T, S, D, H = 2, 4, 6, 8, 4

# %% [markdown]
# ## Splitting and merging heads（拆分与合并头）
#
# `(B, T, D) -> (B, H, T, Dk)` and back: `merge_heads(split_heads(X))` is `X`.
#
# `(B, T, D) -> (B, H, T, Dk)`，再变回来：`merge_heads(split_heads(X))` 就是
# `X`。

# %%
with notebooks.attempt("split_heads / merge_heads"):
    X = rng.standard_normal((B, T, D)).astype("float32")
    heads = np.asarray(m.split_heads(X, H))
    print("split:", X.shape, "->", heads.shape)
    print(
        "round trip exact:", np.array_equal(np.asarray(m.merge_heads(heads)), X)
    )
    print("head 1 of token 0 is X[0, 0, 2:4]:", heads[0, 1, 0], X[0, 0, 2:4])

# %% [markdown]
# ## One picture per head（每个头一张图）
#
# Self-attention over `S` tokens, sequence 0 with all 6 keys valid and
# sequence 1 with 3: each head weighs the keys its own way, and the masked
# keys get exactly 0 in every head.
#
# 在 `S` 个词元上做自注意力，序列 0 的 6 个键全部有效，序列 1 有 3 个：
# 每个头按自己的方式给键分配权重，而被掩蔽的键在每个头里的权重都恰好为 0。

# %%
with notebooks.attempt("MultiHeadAttention"):
    attention = m.MultiHeadAttention(num_hiddens=D, num_heads=H, dropout=0.0)
    X = rng.standard_normal((B, S, D)).astype("float32")
    out, weights = attention(
        X,
        X,
        X,
        valid_lens=np.array([6, 3], dtype="int32"),
        return_attention_weights=True,
    )
    weights = np.asarray(weights)  # (B, H, S, S)
    print("output", tuple(out.shape), "weights", weights.shape)
    plots.heatmaps(
        weights,
        titles=[f"seq {b}, head {h}" for b in range(B) for h in range(H)],
    )
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("18")
