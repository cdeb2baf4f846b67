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
# # Lesson 24, capstone B: your Transformer
#
# This notebook builds lesson 20's encoder-decoder from **your** lessons
# (l06 Vocab, l13 build_array_nmt, l14 beam_search, l18 MultiHeadAttention,
# l19 PositionalEncoding, l20 blocks), trains it on the embedded
# English-French corpus, translates held-out sentences and shows what the
# attention looks at. The last cell grades the capstone like `m2t grade 24`
# (your parts' own graders first).

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
# ## Train and translate
#
# The grader's settings (`m.HYPERPARAMETERS`); `M2T_SHORT=1` trains on 300
# pairs for 2 epochs, which shows the pipeline run, not a good translator.

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
# ## Attention maps
#
# The longest held-out sentence: the last encoder block's self-attention
# (source words attending to source words) and the last decoder block's
# encoder-decoder attention (each output word's weights over the source).
# One colour scale for all heads; the tokens on the axes. Look for the
# reordering: a French colour adjective follows its noun, so its row
# weighs the English adjective that came *before* the noun.

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
# ## Grade
#
# Your parts' own graders first (a failing one is named: fix that lesson
# first), then the assembly, then training to held-out BLEU >= 0.9.

# %%
result = notebooks.grade("24")
