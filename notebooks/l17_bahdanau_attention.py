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
# # Lesson 17: Bahdanau attention (Bahdanau 注意力)
#
# This notebook runs **your** `lessons/l17_bahdanau_attention.py` (reloaded
# after each save); the last cell grades it like `m2t grade 17`.
#
# At each decoding step the decoder's previous hidden state is the query;
# the encoder's outputs are the keys and values; the context it pools is
# fed to the GRU with the embedded token.
#
# 这个笔记本运行**你的**
# `lessons/l17_bahdanau_attention.py`（每次保存后重新加载）；最后一个单元格像
# `m2t grade 17` 那样给它评分。在每个解码时间步，解码器上一步的隐状态是查询；
# 编码器的输出是键和值；汇聚得到的上下文变量与嵌入后的词元一起送进 GRU。

# %%
import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("17")
B, S, T, V, E, Hd = 2, 7, 5, 12, 8, 16
rng = np.random.default_rng(0)

# %% [markdown]
# ## The attention weights of every step（每一步的注意力权重）
#
# An untrained decoder over random encoder outputs; sequence 1 has only 4
# valid source tokens, so the last 3 columns get weight exactly 0.
#
# 一个未训练的解码器，作用于随机的编码器输出；序列 1 只有 4 个有效的源词元，
# 所以最后 3 列的权重恰好为 0。

# %%
with notebooks.attempt("Seq2SeqAttentionDecoder"):
    keras.utils.set_random_seed(0)
    decoder = m.Seq2SeqAttentionDecoder(V, E, Hd, num_layers=2)
    enc_outputs = rng.standard_normal((B, S, Hd)).astype("float32")
    state = rng.standard_normal((B, 2, Hd)).astype("float32")
    X = rng.integers(0, V, (B, T)).astype("int32")
    logits, state_out, weights = decoder(
        X, enc_outputs, state, enc_valid_lens=np.array([7, 4], "int32")
    )
    print("logits", tuple(logits.shape), "state", tuple(state_out.shape))
    plots.heatmaps(
        np.asarray(weights)[None],
        xlabel="source position",
        ylabel="target step",
        titles=["valid_len 7", "valid_len 4"],
    )
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("17")
