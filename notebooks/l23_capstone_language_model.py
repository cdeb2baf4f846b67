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
# # Lesson 23: capstone A, your language model (语言模型)
#
# This notebook trains **your** three cells (lessons 08, 10, 11) with
# **your** loop (`lessons/l23_capstone_language_model.py`), your iterators
# and perplexity (lesson 07) and your gradient clipping (lesson 08), on the
# embedded character corpus; the last cell grades it like `m2t grade 23`.
# The same settings as the grader, on a fifth of the corpus per epoch, so
# it takes a minute or two per cell.
#
# 这个笔记本用**你的**训练循环（`lessons/l23_capstone_language_model.py`）、
# 你的迭代器和困惑度（第 07 课）以及你的梯度裁剪（第 08 课），
# 在内嵌的字符语料上训练**你的**三种单元（第 08、10、11 课）；最后一个单元格像
# `m2t grade 23` 那样给它评分。设置与评分器相同，
# 每个迭代周期只用五分之一的语料，所以每个单元格要花一两分钟。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t.student import notebooks

m = notebooks.load("23")
parts = m.Parts(*(notebooks.load(n) for n in ("07", "08", "10", "11")))
train_ids, held_out_ids = m.corpus_ids()
print(f"{len(train_ids)} training characters, {len(held_out_ids)} held out")

# %%
runs = {}
with notebooks.attempt("train_step"):
    for cell in m.CELLS:
        out = m.run(parts, cell, train_ids[:50_000], held_out_ids)
        picked = out["log_probs"][
            np.arange(len(held_out_ids) - 1), held_out_ids[1:]
        ]
        runs[cell] = (out, float(np.exp(-picked.mean())))
        print(
            f"{cell}: held-out perplexity {runs[cell][1]:.2f} after "
            f"{sum(out['cpu_seconds']):.0f} CPU s"
        )

# %%
if runs:
    plt.figure(figsize=(5.5, 3.2))
    for cell, (out, held) in runs.items():
        cpu = np.cumsum(out["cpu_seconds"])
        plt.plot(
            cpu, out["curve"], marker="o", label=f"{cell} (held out {held:.2f})"
        )
    plt.xlabel("CPU seconds")
    plt.ylabel("training perplexity")
    plt.title("your three cells, your loop")
    plt.legend()
    plt.show()

# %% [markdown]
# Perplexity 27 is a uniform guess over space and a-z; the grammar behind
# the embedded corpus lets a good model go far below that. Try
# `{"use_random_iter": True}` as `run`'s `hp`: every minibatch then starts
# from zeros, and the models see no context across minibatches.
#
# 困惑度 27 相当于在空格和 a-z 上均匀地猜；
# 内嵌语料背后的语法让好的模型能远低于这个数。试试把 `{"use_random_iter":
# True}` 作为 `run` 的 `hp`：每个小批量都从零开始，
# 模型就看不到跨小批量的上下文了。

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("23")
