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
# # Lesson 24, capstone B: your Transformer（毕业项目 B：你的 Transformer）
#
# This notebook builds lesson 20's encoder-decoder from **your** lessons
# (l06 Vocab, l13 build_array_nmt, l14 beam_search, l18 MultiHeadAttention,
# l19 PositionalEncoding, l20 blocks), trains it on the embedded
# English-French corpus, translates held-out sentences and shows what the
# attention looks at. The last cell grades the capstone like `m2t grade 24`
# (your parts' own graders first).
#
# 这个笔记本用**你的**各课（l06 Vocab、l13 build_array_nmt、l14 beam_search、
# l18 MultiHeadAttention、l19 PositionalEncoding、l20 的各个块）搭出第 20
# 课的编码器-解码器，在内嵌的英法语料上训练，翻译留出的句子，
# 并展示注意力在看哪里。最后一个单元格像 `m2t grade 24`
# 那样给毕业项目评分（先运行你的各部分自己的评分器）。

# %%
import matplotlib.pyplot as plt
import numpy as np

import m2t_data
from m2t import plots
from m2t.questions.experiments import bleu
from m2t.student import notebooks

m = notebooks.load("24")
parts = m.Parts(
    text=notebooks.load("06"),
    nmt=notebooks.load("13"),
    seq2seq=notebooks.load("14"),
    attention=notebooks.load("18"),
    positional=notebooks.load("19"),
    transformer=notebooks.load("20"),
)

# %% [markdown]
# ## Train and translate（训练与翻译）
#
# The grader's settings (`m.HYPERPARAMETERS`); `M2T_SHORT=1` trains on 300
# pairs for 2 epochs, which shows the pipeline run, not a good translator.
#
# 评分器的设置（`m.HYPERPARAMETERS`）；`M2T_SHORT=1` 只在 300 个句对上训练 2
# 个迭代周期，这只能看到流程跑通，得不到好的翻译器。

# %%
pairs = m2t_data.translation_pairs("embedded", "train")
held_out = m2t_data.translation_pairs("embedded", "test")[:100]
hp = {}
if notebooks.short():
    pairs, held_out, hp = pairs[:300], held_out[:10], {"epochs": 2}
out = None
with notebooks.attempt("CapstoneTransformer / translate"):
    out = m.run(parts, pairs, [e for e, _ in held_out], hp)
    translations = out["translations"]
    scores = [
        bleu(p, f) for p, (_, f) in zip(translations, held_out, strict=True)
    ]
    print(f"trained {out['seconds']:.0f} s; BLEU {np.mean(scores):.3f}")
    for i in range(min(6, len(held_out))):
        english, french = held_out[i]
        print(f"{english} => {translations[i]}, bleu {scores[i]:.3f}")
        print(f"    (reference: {french})")
    plt.figure(figsize=(4.5, 3))
    plt.plot(np.arange(1, len(out["losses"]) + 1), out["losses"], "o-")
    plt.xlabel("epoch")
    plt.ylabel("training loss")
    plt.grid(alpha=0.3)
    plt.show()

# %% [markdown]
# ## Attention maps（注意力图）
#
# The longest held-out sentence: the last encoder block's self-attention
# (source words attending to source words) and the last decoder block's
# encoder-decoder attention (each output word's weights over the source).
# One colour scale for all heads; the tokens on the axes. Look for the
# reordering: a French colour adjective follows its noun, so its row
# weighs the English adjective that came *before* the noun.
#
# 最长的那个留出句子：最后一个编码器块的自注意力（源词关注源词），
# 以及最后一个解码器块的编码器-解码器注意力（每个输出词在源序列上的权重）。
# 所有头共用一个颜色刻度；坐标轴上是词元。注意看语序的调整：
# 法语的颜色形容词跟在名词后面，
# 所以它那一行的权重落在名词*之前*的那个英语形容词上。

# %%
if out is not None:
    i = int(np.argmax([len(e.split(" ")) for e, _ in held_out]))
    src, tgt = out["src"], out["tgt"]
    num_steps = src.tokens.shape[1]
    english = held_out[i][0]
    x, x_len = m.encode_sentences(parts, [english], src.vocab, num_steps)
    words = out["translations"][i].split(" ")
    dec = [tgt.vocab["<bos>"], *(tgt.vocab[w] for w in words)][:num_steps]
    maps = out["model"].attention_maps(x, x_len, np.asarray([dec], "int32"))
    keys = (english.split(" ") + ["<eos>"])[: int(x_len[0])]
    queries = {
        "encoder self-attention": keys,
        "decoder-encoder attention": ["<bos>", *words][: len(dec)],
    }
    for title, weights in maps.items():
        rows = queries[title]
        heads = np.asarray(weights)[:, : len(rows), : len(keys)]
        plots.heatmaps(
            heads,
            titles=[f"head {h + 1}" for h in range(len(heads))],
            xlabel="source (keys)",
            ylabel="queries",
            xticks=keys,
            yticks=rows,
            suptitle=title,
        )
        plt.show()

# %% [markdown]
# ## Grade（评分）
#
# Your parts' own graders first (a failing one is named: fix that lesson
# first), then the assembly, then training to held-out BLEU >= 0.9.
#
# 先运行你的各部分自己的评分器（失败的那个会被指出：先修好那一课），
# 然后是组装，最后训练到留出数据上的 BLEU >= 0.9。

# %%
result = notebooks.grade("24")
