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
# # Lesson 13: the machine translation data set (机器翻译数据集)
#
# This notebook runs **your** `lessons/l13_machine_translation_data.py`
# (reloaded after each save); the last cell grades it like `m2t grade 13`.
#
# From raw sentence pairs to arrays a model can batch: normalise the text,
# split it into word tokens, map tokens to ids, then make every sequence
# `num_steps` long by truncating or padding (填充) it, keeping each one's
# valid length.
#
# 这个笔记本运行**你的**
# `lessons/l13_machine_translation_data.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 13` 那样给它评分。
# 从原始的句对到模型可以分批处理的数组：规范处理文本，切分成单词词元，
# 把词元映射成 id，再通过截断或填充让每个序列都长 `num_steps`，
# 并记下各自的有效长度。

# %%
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

import m2t_data
from m2t.student import notebooks

m = notebooks.load("13")
raw = m2t_data.fra_eng_text()  # generated English-French pairs, no download
print(raw[:160])

# %% [markdown]
# ## Preprocessing（预处理）
#
# Non-breaking spaces become spaces, everything is lower-cased, and a
# space goes in front of `, . ! ?` when a word touches it: the mark becomes
# a token of its own. A mark that already has a space gets no second one.
#
# 不间断空格变成普通空格，全部转成小写，单词紧贴着 `, . ! ?`
# 时在标点前面补一个空格：标点就成了单独的词元。
# 已经有空格的标点不会再补第二个。

# %%
with notebooks.attempt("preprocess_nmt"):
    for line in [
        "Go.\tVa !",
        "Hi, Tom!\tSalut,\u202fTom\u00a0!",
        "Wait...\tAttends.",
    ]:
        print(f"{line!r:36} -> {m.preprocess_nmt(line)!r}")

# %% [markdown]
# ## Word tokens（单词词元）
#
# Split each line at the tab into source and target, then each side at
# spaces. The lengths vary: this is why the arrays below need padding.
#
# 每一行在制表符处切成源语言和目标语言，两边再按空格切分。长度各不相同：
# 这就是下面的数组需要填充的原因。

# %%
with notebooks.attempt("tokenize_nmt"):
    source, target = m.tokenize_nmt(m.preprocess_nmt(raw))
    print(len(source), "pairs;", source[0], "->", target[0])
    plt.figure(figsize=(5, 2.8))
    lengths = [len(line) for line in source + target]
    bins = np.arange(min(lengths), max(lengths) + 2) - 0.5
    plt.hist(
        [[len(s) for s in source], [len(t) for t in target]],
        bins=bins,
        label=["English", "French"],
    )
    plt.xlabel("tokens per sentence")
    plt.ylabel("pairs")
    plt.legend()
    plt.show()

# %% [markdown]
# ## Truncate or pad to `num_steps`（截断或填充到 `num_steps`）

# %%
with notebooks.attempt("truncate_pad"):
    print(m.truncate_pad([47, 4], 5, 1))
    print(m.truncate_pad(list("abcdefg"), 3, "<pad>"))

# %% [markdown]
# ## The arrays（数组）
#
# Each line gets `<eos>`, then is cut or padded to `num_steps`; the valid
# length counts everything but `<pad>`. Padding goes on the right, so the
# real tokens sit at positions `0 .. valid_len - 1`, which is what the
# masks of later lessons assume. Rare words (seen once) become `<unk>`.
#
# 每一行加上 `<eos>`，再截断或填充到 `num_steps`；有效长度统计除 `<pad>`
# 之外的所有词元。填充放在右边，所以真实的词元位于 `0 .. valid_len - 1`，
# 后面各课的掩码都是这样假定的。罕见的词（只出现一次）变成 `<unk>`。

# %%
num_steps = 8
with notebooks.attempt("build_array_nmt"):
    source, _ = m.tokenize_nmt(m.preprocess_nmt(raw))
    vocab = m.Vocab(source, min_freq=2, reserved_tokens=[m.PAD, m.BOS, m.EOS])
    print(
        f"source vocabulary: {len(vocab)} tokens;",
        vocab.to_tokens(list(range(6))),
    )
    by_length = {len(line): line for line in source}
    rows = [by_length[n] for n in sorted(by_length)]  # one per length
    array, valid_len = m.build_array_nmt(rows, vocab, num_steps)
    print("array", array.shape, array.dtype, " valid_len", valid_len.tolist())
    kind = np.select(
        [array == vocab[m.PAD], array == vocab[m.EOS]], [0, 2], default=1
    )
    plt.figure(figsize=(8, 2.8))
    plt.imshow(
        kind,
        cmap=ListedColormap(["white", "lightsteelblue", "orange"]),
        vmin=0,
        vmax=2,
        aspect="auto",
    )
    for (r, c), idx in np.ndenumerate(array):
        plt.text(
            c, r, vocab.to_tokens(idx), ha="center", va="center", fontsize=8
        )
    plt.yticks(range(len(rows)), [f"valid_len {v}" for v in valid_len])
    plt.xticks(range(num_steps))
    plt.xlabel("position")
    plt.title("orange: <eos>, white: <pad>; long lines lose their <eos>")
    plt.show()

# %% [markdown]
# ## The whole pipeline（完整的流程）
#
# `load_data_nmt` (given) chains your four functions and builds one
# vocabulary per language.
#
# `load_data_nmt`（已给出）把你的四个函数串起来，并为每种语言各建一个词表。

# %%
with notebooks.attempt("load_data_nmt"):
    src, src_len, tgt, tgt_len, src_vocab, tgt_vocab = m.load_data_nmt(
        num_steps, num_examples=600
    )
    print("source", src.shape, src_len.shape, "vocabulary", len(src_vocab))
    print("target", tgt.shape, tgt_len.shape, "vocabulary", len(tgt_vocab))
    print(src[0], "->", src_vocab.to_tokens(src[0]))

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("13")
