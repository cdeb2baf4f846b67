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
# # Lesson 05: sequence models (序列模型)
#
# This notebook runs **your** `lessons/l05_sequence_models.py` (reloaded
# after each save); the last cell grades it like `m2t grade 05`.
#
# An autoregressive model predicts `x_t` from the `tau` values before it.
# One step ahead it does well; fed its own predictions, errors compound.
#
# 这个笔记本运行**你的** `lessons/l05_sequence_models.py`（每次保存后重新加载）
# ；最后一个单元格像 `m2t grade 05` 那样给它评分。自回归模型用 `x_t` 前面的
# `tau` 个值来预测它。单步预测做得不错；喂给它自己的预测时，误差就会累积。

# %%
import matplotlib.pyplot as plt
import numpy as np

import m2t_data
from m2t.student import notebooks

m = notebooks.load("05")
time, x = m2t_data.noisy_sine(T=1000)
tau = 4

# %%
plt.figure(figsize=(6, 2.6))
plt.plot(time, x)
plt.xlabel("time")
plt.ylabel("x")
plt.show()

# %% [markdown]
# ## Lagged features（滞后特征）
#
# Row `j` holds `x[j], ..., x[j + tau - 1]`; its label is `x[j + tau]`.
#
# 第 `j` 行是 `x[j], ..., x[j + tau - 1]`；它的标签是 `x[j + tau]`。

# %%
with notebooks.attempt("lagged_features"):
    features, labels = m.lagged_features(x, tau)
    print(features.shape, labels.shape)
    print(features[:2], labels[:2])

# %% [markdown]
# ## Training, then k-step-ahead prediction（训练，然后做 k 步预测）

# %%
model = None
with notebooks.attempt("train_autoregressive_mlp"):
    epochs = 1 if notebooks.short() else 5
    model, losses = m.train_autoregressive_mlp(x, tau, epochs=epochs)
    print("training loss per epoch:", np.round(losses, 4))

# %%
with notebooks.attempt("k_step_predict"):
    if model is None:
        raise NotImplementedError("it needs the trained model above")
    steps = (1, 4, 16, 64)
    plt.figure(figsize=(7, 3))
    plt.plot(time, x, color="lightgrey", label="data")
    for k in steps:
        pred = m.k_step_predict(model, x, tau, k)
        plt.plot(time[tau + k - 1 :], pred, label=f"{k}-step")
    plt.xlabel("time")
    plt.legend(ncol=5, fontsize=8)
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("05")
