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
# # Lesson 20: the Transformer
#
# This notebook runs **your** `lessons/l20_transformer.py` (reloaded after
# each save); the last cell grades it like `m2t grade 20`.
#
# Encoder blocks: self-attention and a position-wise FFN, each followed by
# `AddNorm` (`LayerNorm(X + Dropout(Y))`). Decoder blocks add a causal mask
# on self-attention and attend to the encoder's outputs.
#
# 这个笔记本运行**你的** `lessons/l20_transformer.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 20` 那样给它评分。编码器块：
# 自注意力和基于位置的前馈网络，各接一个 `AddNorm`（`LayerNorm(X +
# Dropout(Y))`）。解码器块在自注意力上加了因果掩蔽，并且关注编码器的输出。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("20")

# %% [markdown]
# ## The two masks（两种掩码）
#
# Padding: keys past a sequence's valid length are hidden. Causal: query
# `t` sees positions up to `t` only (True, dark, means attend).
#
# 填充掩码：超出序列有效长度的键被掩蔽。因果掩蔽：查询 `t` 只能看到直到 `t`
# 的位置（True，深色，表示关注）。

# %%
with notebooks.attempt("padding_mask / causal_mask"):
    padding = np.asarray(m.padding_mask(np.array([3, 5]), 5, 5))
    causal = np.asarray(m.causal_mask(5, 5))
    plots.heatmaps(
        np.concatenate([padding, causal]).astype(float)[None],
        titles=["valid_len 3", "valid_len 5", "causal"],
        cmap="Greys",
    )
    plt.show()

# %% [markdown]
# ## Learning to reverse（学会倒序）
#
# A two-block Transformer learns to output its input backwards, with
# teacher forcing (the decoder reads `<bos>` and the target shifted right).
#
# 一个两块的 Transformer 学着把输入倒过来输出，训练时用强制教学（解码器读入
# `<bos>` 和右移一位的目标序列）。

# %%
PAD, BOS, EOS, V, L = 0, 1, 2, 12, 6
rng = np.random.default_rng(0)
n = 256 if notebooks.short() else 2048
src = rng.integers(3, V, (n, L)).astype("int32")
tgt = np.concatenate([src[:, ::-1], np.full((n, 1), EOS)], 1).astype("int32")
dec_in = np.concatenate([np.full((n, 1), BOS), tgt[:, :-1]], 1).astype("int32")
src_len = np.full((n,), L, "int32")

with notebooks.attempt("Transformer"):
    keras.utils.set_random_seed(0)
    model = m.Transformer(
        V,
        V,
        num_hiddens=32,
        ffn_num_hiddens=64,
        num_heads=4,
        num_blks=2,
        dropout=0.0,
    )
    model.compile(
        optimizer=keras.optimizers.Adam(0.005),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(
        (src, src_len, dec_in),
        tgt,
        batch_size=64,
        epochs=2 if notebooks.short() else 20,
        verbose=0,
    )
    plt.figure(figsize=(4, 2.6))
    plt.plot(history.history["loss"], "o-")
    plt.xlabel("epoch")
    plt.ylabel("training loss")
    plt.show()
    tokens, lengths = m.greedy_decode(
        model, src[:4], src_len[:4], BOS, EOS, num_steps=L + 1
    )
    for s, t, k in zip(src[:4], tokens, lengths, strict=True):
        print(s, "->", t[:k])

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("20")
