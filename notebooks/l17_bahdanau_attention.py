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
# ## The attention weights of every step
#
# An untrained decoder over random encoder outputs; sequence 1 has only 4
# valid source tokens, so the last 3 columns get weight exactly 0.

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
# ## Grade

# %%
result = notebooks.grade("17")
