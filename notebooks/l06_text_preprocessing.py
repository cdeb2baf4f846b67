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
# # Lesson 06: text preprocessing (文本预处理)
#
# This notebook runs **your** `lessons/l06_text_preprocessing.py` (reloaded
# after each save); the last cell grades it like `m2t grade 06`.
#
# Lines become tokens (words or characters), tokens become indices through a
# vocabulary (词表) sorted by frequency, with `<unk>` at index 0.
#
# 这个笔记本运行**你的**
# `lessons/l06_text_preprocessing.py`（每次保存后重新加载）；最后一个单元格像
# `m2t grade 06` 那样给它评分。文本行变成词元（单词或字符），
# 词元再通过按频率排序的词表变成索引，`<unk>` 的索引为 0。

# %%
import matplotlib.pyplot as plt

import m2t_data
from m2t.student import notebooks

m = notebooks.load("06")
lines = m2t_data.time_machine_lines()  # embedded; source="real" for the book
print(len(lines), "lines;", lines[0][:60])

# %%
with notebooks.attempt("tokenize / Vocab"):
    for kind in ("word", "char"):
        tokens = m.tokenize(lines, kind)
        vocab = m.Vocab(tokens)
        print(f"{kind}: {len(vocab)} types; {vocab.token_freqs[:6]}")
    words = m.Vocab(m.tokenize(lines, "word"))
    print(words[["the", "time", "machine"]], words.to_tokens([1, 2, 3]))

# %% [markdown]
# ## Zipf's law（齐普夫定律）
#
# Word frequency against rank is close to a straight line on log-log axes:
# a few words are everywhere, most are rare.
#
# 在双对数坐标上，词频对排名几乎是一条直线：少数几个词到处都是，
# 大多数词都很罕见。

# %%
with notebooks.attempt("Vocab.token_freqs"):
    freqs = [f for _, f in words.token_freqs]
    plt.figure(figsize=(4.5, 3))
    plt.loglog(range(1, len(freqs) + 1), freqs)
    plt.xlabel("rank")
    plt.ylabel("frequency")
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("06")
