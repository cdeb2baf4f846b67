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
# # Lesson 22: backpropagation through time (通过时间反向传播)
#
# This notebook runs **your** `lessons/l22_bptt.py` (reloaded after each
# save); the last cell grades it like `m2t grade 22`.
#
# How far back does the last step's loss reach? With only the last step's
# loss term, the share step T - k + 1 adds to dW_hh is the difference
# between your gradients truncated at tau = k and at tau = k - 1. Its size
# against k shows d2l's vanishing and exploding gradients (8.7.2 (9.7.2)):
# the powers of W_hh^T.
#
# 这个笔记本运行**你的** `lessons/l22_bptt.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 22` 那样给它评分。
# 最后一步的损失能往回传多远？只看最后一步的损失项时，第 T - k + 1 步加到 dW_hh
# 上的那一份，就是你的梯度在 tau = k 和 tau = k - 1 处截断的差。它的大小随 k
# 的变化展示了 d2l 所讲的梯度消失和梯度爆炸（8.7.2 (9.7.2)）：W_hh^T 的幂。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t.student import notebooks

m = notebooks.load("22")

# %%
rng = np.random.default_rng(0)
B, D, U, T, Q = 4, 3, 8, 30, 5
X = rng.normal(size=(B, T, D))
H0 = np.zeros((B, U))
dO = np.zeros((B, T, Q))
dO[:, -1] = rng.normal(size=(B, Q))  # only the last step's loss term
base = rng.normal(size=(U, U))
base /= np.abs(np.linalg.eigvals(base)).max()  # spectral radius 1


def shares(radius):
    params = {
        "W_xh": rng.normal(0, 0.3, (D, U)),
        "W_hh": radius * base,
        "b_h": np.zeros(U),
        "W_hq": rng.normal(0, 1.0, (U, Q)),
        "b_q": np.zeros(Q),
    }
    _, cache = m.rnn_forward(X * 0.1, H0, params)
    grads = [m.rnn_backward(dO, cache, tau)["W_hh"] for tau in range(1, T + 1)]
    steps = [grads[0], *np.diff(np.stack(grads), axis=0)]  # one per step
    return [np.linalg.norm(g) for g in steps]


with notebooks.attempt("rnn_backward"):
    plt.figure(figsize=(5.5, 3.2))
    for radius in (0.5, 0.9, 1.5):
        plt.semilogy(range(1, T), shares(radius)[1:], label=f"radius {radius}")
    plt.xlabel("steps back from the last")
    plt.ylabel("||share of dW_hh||")
    plt.title("how far the last loss term reaches")
    plt.legend()
    plt.show()

# %% [markdown]
# The tanh's slopes (at most 1) shrink every share further, so even a
# radius above 1 fades once the states saturate. Truncation at tau keeps
# the first tau points of each curve and drops the rest.
#
# tanh 的斜率（至多为 1）让每一份进一步缩小，所以即使半径大于 1，
# 隐状态一饱和也会衰减下去。在 tau 处截断，就是保留每条曲线的前 tau 个点，
# 丢掉其余的。

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("22")
