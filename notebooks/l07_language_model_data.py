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
# # Lesson 07: language models and their data (语言模型和数据集)
#
# This notebook runs **your** `lessons/l07_language_model_data.py` (reloaded
# after each save); the last cell grades it like `m2t grade 07`.
#
# A language model is trained on subsequences cut from one long corpus:
# `X` holds `num_steps` tokens and `Y` the same tokens one step later.
# Random sampling (随机采样) and sequential partitioning (顺序分区) cut the
# corpus differently; perplexity (困惑度) scores the model.
#
# 这个笔记本运行**你的**
# `lessons/l07_language_model_data.py`（每次保存后重新加载）；最后一个单元格像
# `m2t grade 07` 那样给它评分。语言模型用从一条长语料中切出的子序列来训练：`X`
# 是 `num_steps` 个词元，`Y` 是同样的词元后移一步。
# 随机采样和顺序分区切分语料的方式不同；困惑度给模型打分。

# %%
import matplotlib.pyplot as plt
import numpy as np

import m2t_data
from m2t.student import notebooks

m = notebooks.load("07")
corpus = np.arange(35)  # token i is the number i: easy to follow
B, T = 2, 5

# %% [markdown]
# ## Both iterators on the corpus 0 .. 34（两种迭代器作用于语料 0 .. 34）
#
# `Y` is `X` shifted by one. Both skip a random offset in `[0, T)` first,
# so each epoch cuts the corpus at different places.
#
# `Y` 是 `X` 后移一位。两者都先跳过 `[0, T)` 中的一个随机偏移，
# 所以每个迭代周期都在不同的位置切分语料。

# %%
batches = {}
for name, fn in (
    ("random", m.seq_data_iter_random),
    ("sequential", m.seq_data_iter_sequential),
):
    with notebooks.attempt(fn.__name__):
        batches[name] = list(fn(corpus, batch_size=B, num_steps=T, seed=0))
        print(f"{name}:")
        for X, Y in batches[name]:
            print("  X", X.tolist(), " Y", Y.tolist())

# %% [markdown]
# ## Minibatches as index grids（把小批量画成索引网格）
#
# Each panel is one minibatch `X`, `(B, T)`, coloured by token index.
# Random: the rows of a minibatch, and minibatches one after another,
# jump around the corpus. Sequential: row `b` of one minibatch continues
# where row `b` of the previous one stopped, so a model may carry its
# hidden state across minibatches.
#
# 每一格是一个小批量 `X`，`(B, T)`，按词元索引着色。随机采样：
# 一个小批量中的各行，以及先后相继的各个小批量，都在语料中跳来跳去。顺序分区：
# 一个小批量的第 `b` 行从上一个小批量第 `b` 行停下的地方接着往下，
# 所以模型可以把隐状态跨小批量传下去。

# %%
if batches:
    cols = max(len(b) for b in batches.values())
    fig, axes = plt.subplots(
        len(batches),
        cols,
        figsize=(2.2 * cols, 1.3 * len(batches) + 0.6),
        squeeze=False,
    )
    for r, (name, minibatches) in enumerate(batches.items()):
        for i, ax in enumerate(axes[r]):
            ax.set_xticks([])
            ax.set_yticks([])
            if i >= len(minibatches):
                ax.axis("off")
                continue
            X = minibatches[i][0]
            ax.imshow(X, cmap="viridis", vmin=0, vmax=len(corpus) - 1)
            for (b, t), token in np.ndenumerate(X):
                ax.text(t, b, token, ha="center", va="center", color="w")
            ax.set_title(f"{name}, minibatch {i}", fontsize=9)
    plt.show()

# %% [markdown]
# The same minibatches seen from the corpus: each token is coloured by the
# minibatch whose `X` uses it (white: not used this epoch) and labelled
# with its row `b` in that minibatch.
#
# 从语料的角度看同样的这些小批量：每个词元按用到它的 `X`
# 所属的小批量着色（白色：本轮没有用到），并标出它在那个小批量中的行号 `b`。

# %%
if batches:
    fig, axes = plt.subplots(
        len(batches), 1, figsize=(11, 0.8 * len(batches) + 0.6), sharex=True
    )
    axes = np.atleast_1d(axes)
    for ax, (name, minibatches) in zip(axes, batches.items(), strict=True):
        strip = np.full(len(corpus), np.nan)
        rows = np.full(len(corpus), -1)
        for i, (X, _) in enumerate(minibatches):
            for (b, _), token in np.ndenumerate(X):
                strip[token], rows[token] = i, b
        ax.imshow(strip[None], cmap="tab10", vmin=0, vmax=9, aspect="auto")
        for token, b in enumerate(rows):
            if b >= 0:
                ax.text(token, 0, f"b{b}", ha="center", va="center", fontsize=7)
        ax.set_yticks([0], [name])
    n = max(len(b) for b in batches.values())
    handles = [plt.Rectangle((0, 0), 1, 1, color=f"C{i}") for i in range(n)]
    fig.legend(
        handles,
        [f"minibatch {i}" for i in range(n)],
        ncol=n,
        loc="upper center",
        fontsize=8,
        frameon=False,
    )
    axes[-1].set_xticks(range(0, len(corpus), 5))
    axes[-1].set_xlabel("position in the corpus")
    plt.show()

# %% [markdown]
# ## On text（在文本上）
#
# With characters as tokens, `Y` reads as `X` moved one letter on: at
# every position the label is the next character.
#
# 以字符为词元时，`Y` 读起来就是 `X` 往后移了一个字母：
# 每个位置的标签都是下一个字符。

# %%
text = " ".join(line for line in m2t_data.time_machine_lines() if line)
chars = sorted(set(text))
ids = np.array([chars.index(c) for c in text[:50_000]])
with notebooks.attempt("seq_data_iter_sequential"):
    X, Y = next(m.seq_data_iter_sequential(ids, 4, 20, seed=0))
    for x, y in zip(X, Y, strict=True):
        print(
            repr("".join(chars[i] for i in x)),
            "->",
            repr("".join(chars[i] for i in y)),
        )

# %% [markdown]
# ## Perplexity（困惑度）
#
# `exp(mean cross-entropy)`: a uniform guess over `V` characters scores
# exactly `V`. Counting letter frequencies (unigram) does better; counting
# which letter follows which (bigram) better still. Counts come from the
# first 40,000 characters, the scores from the next 10,000.
#
# `exp(平均交叉熵)`：在 `V` 个字符上均匀猜测，得分正好是 `V`。
# 统计字母频率（一元语法）做得更好；统计哪个字母跟在哪个字母后面（二元语法）
# 更好。计数来自前 40,000 个字符，得分来自接下来的 10,000 个字符。

# %%
V = len(chars)
fit, test = ids[:40_000], ids[40_000:]
unigram = (np.bincount(fit, minlength=V) + 1) / (len(fit) + V)
pairs = np.ones((V, V))
np.add.at(pairs, (fit[:-1], fit[1:]), 1)
bigram = pairs / pairs.sum(axis=1, keepdims=True)
losses = {
    "uniform": np.full(len(test) - 1, np.log(V)),
    "unigram": -np.log(unigram[test[1:]]),
    "bigram": -np.log(bigram[test[:-1], test[1:]]),
}
with notebooks.attempt("perplexity"):
    scores = {k: float(m.perplexity(v)) for k, v in losses.items()}
    plt.figure(figsize=(4.5, 2.8))
    plt.bar(scores.keys(), scores.values())
    for i, s in enumerate(scores.values()):
        plt.text(i, s + 0.3, f"{s:.1f}", ha="center")
    plt.ylabel("perplexity")
    plt.title(f"V = {V} characters")
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("07")
