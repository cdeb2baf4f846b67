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
# keeper's inventory (a generated corpus whose lists are named twice, a
# clause apart); the last cell grades it like `m2t grade 23`. The same
# settings as the grader, on a fifth of the corpus per epoch, so it takes a
# minute or two per cell.
#
# 这个笔记本用**你的**训练循环（`lessons/l23_capstone_language_model.py`）、
# 你的迭代器和困惑度（第 07 课）以及你的梯度裁剪（第 08 课），
# 在“看守人的清单”（程序生成的语料，其中的清单隔一个分句会再列一遍）上
# 训练**你的**三种单元（第 08、10、11 课）；
# 最后一个单元格像 `m2t grade 23` 那样给它评分。
# 设置与评分器相同，每个迭代周期只用五分之一的语料，所以每个单元格要花一两分钟。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t.student import notebooks

m = notebooks.load("23")
parts = m.Parts(*(notebooks.load(n) for n in ("07", "08", "10", "11")))
train_ids, held_out = m.corpus_ids()  # held_out: (50, 100) texts
print(f"{len(train_ids)} training characters, {held_out.size} held out")

# %%
runs = {}
with notebooks.attempt("train_step"):
    for cell in m.CELLS:
        out = m.train(parts, cell, train_ids[:50_000])
        runs[cell] = (out, m.held_out_perplexity(out["model"], held_out))
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
# the corpus lets a good model go far below that. The counting baseline
# (Kneser-Ney n-grams, the best order of 1 to 8, as the grader computes it)
# sees at most 7 characters back; your cells can carry a list across the
# clause. Try `{"use_random_iter": True}` as `train`'s `hp`: every
# minibatch then starts from zeros, and the models see no context across
# minibatches.
#
# 困惑度 27 相当于在空格和 a-z 上均匀地猜；
# 语料背后的语法让好的模型能远低于这个数。计数基线（Kneser-Ney n 元语法，
# 1 到 8 阶中最好的一个，与评分器的算法相同）最多只能往回看 7 个字符；
# 你的单元能把清单带过分句。试试把 `{"use_random_iter": True}` 作为 `train`
# 的 `hp`：每个小批量都从零开始，模型就看不到跨小批量的上下文了。

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("23")
