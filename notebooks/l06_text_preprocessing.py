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
# ## Zipf's law
#
# Word frequency against rank is close to a straight line on log-log axes:
# a few words are everywhere, most are rare.

# %%
with notebooks.attempt("Vocab.token_freqs"):
    freqs = [f for _, f in words.token_freqs]
    plt.figure(figsize=(4.5, 3))
    plt.loglog(range(1, len(freqs) + 1), freqs)
    plt.xlabel("rank")
    plt.ylabel("frequency")
    plt.show()

# %% [markdown]
# ## Grade

# %%
result = notebooks.grade("06")
