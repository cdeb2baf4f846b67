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
# # Lesson 14: sequence to sequence learning (序列到序列学习)
#
# This notebook runs **your** `lessons/l14_seq2seq.py` (reloaded after each
# save); the last cell grades it like `m2t grade 14`.
#
# Padding must not count: `sequence_mask` zeroes what lies past each valid
# length, and the masked cross-entropy averages over the real tokens only.
# BLEU scores a translation by its matching n-grams.
#
# 这个笔记本运行**你的** `lessons/l14_seq2seq.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 14` 那样给它评分。填充不能算数：`sequence_mask`
# 把每个有效长度之后的部分置零，掩蔽交叉熵只在真实词元上取平均。BLEU 按匹配的 n
# 元语法给译文打分。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("14")

# %% [markdown]
# ## Masking padded steps（掩蔽填充的时间步）

# %%
with notebooks.attempt("sequence_mask"):
    X = np.ones((4, 8), "float32")
    masked = np.asarray(m.sequence_mask(X, np.array([2, 5, 8, 0])))
    plots.heatmaps(masked, xlabel="time step", ylabel="sequence", cmap="Greys")
    plt.show()

# %% [markdown]
# ## BLEU
#
# Matching n-grams, with a brevity penalty: a short prediction that only
# copies the first words scores low.
#
# 匹配的 n 元语法，再加上过短惩罚：只抄了前几个词的短预测得分很低。

# %%
with notebooks.attempt("bleu"):
    label = "ils regardent la mer ."
    for pred in (
        "ils regardent la mer .",
        "ils regardent .",
        "ils regardent la plage .",
        "la mer .",
    ):
        print(f"{m.bleu(pred, label, k=2):.3f}  {pred}")

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("14")
