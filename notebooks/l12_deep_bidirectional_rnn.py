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
# # Lesson 12: deep and bidirectional RNNs (深度循环神经网络、双向循环神经网络)
#
# This notebook runs **your** `lessons/l12_deep_bidirectional_rnn.py`
# (reloaded after each save); the last cell grades it like `m2t grade 12`.
#
# A deep RNN stacks recurrent layers: each reads the whole output sequence
# of the one below. A bidirectional RNN runs one RNN left to right and one
# right to left and joins their states at each position, so position `t`
# sees the whole sequence, the future included.
#
# 这个笔记本运行**你的**
# `lessons/l12_deep_bidirectional_rnn.py`（每次保存后重新加载）；
# 最后一个单元格像 `m2t grade 12` 那样给它评分。
# 深度循环神经网络把循环层堆叠起来：每一层读入下面那一层的整个输出序列。
# 双向循环神经网络让一个网络从左往右、另一个从右往左运行，
# 并在每个位置把它们的隐状态连结起来，所以位置 `t` 能看到整个序列，包括未来。

# %%

import keras
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("12")
rng = np.random.default_rng(0)
B, T, D, U = 2, 12, 5, 16

# %% [markdown]
# ## Shapes（形状）
#
# The output is the top layer's sequence; the states are one per layer,
# bottom first (an LSTM's state is the pair `[h, c]`). The bidirectional
# layer puts the forward half first: `2U` features per position.
#
# 输出是顶层的序列；状态每层一个，底层在前（LSTM 的状态是一对 `[h, c]`）。
# 双向层把正向的一半放在前面：每个位置 `2U` 个特征。

# %%
x = rng.standard_normal((B, T, D)).astype("float32")


def shapes(state):
    if isinstance(state, (list, tuple)):
        return [shapes(s) for s in state]
    return tuple(state.shape)


with notebooks.attempt("StackedRNN"):
    for cell in ("rnn", "gru", "lstm"):
        outputs, states = m.StackedRNN(3, U, cell=cell)(x)
        print(
            f"StackedRNN(3, {U}, {cell!r}): outputs {tuple(outputs.shape)},"
            f" states {shapes(states)}"
        )
with notebooks.attempt("BidirectionalRNN"):
    outputs, states = m.BidirectionalRNN(U)(x)
    print(
        f"BidirectionalRNN({U}): outputs {tuple(outputs.shape)},"
        f" states {shapes(states)}"
    )

# %% [markdown]
# ## Who reads what（谁读到了什么）
#
# Change the input at one position `s` (rows) and see which outputs `t`
# (columns) move. A stack of one-directional layers, however deep, only
# looks back: nothing changes before `s`. The forward half of the
# bidirectional layer looks back, the backward half forward; together
# every position depends on every input. That is why a bidirectional
# layer cannot be a language model: it would read the next token instead
# of predicting it.
#
# 改变某个位置 `s`（行）的输入，看哪些输出 `t`（列）会跟着变。单向层的堆叠，
# 不管多深，都只往回看：`s` 之前的输出都不变。双向层的正向一半往回看，
# 反向一半往前看；合起来每个位置都依赖每一个输入。
# 这就是双向层不能当语言模型的原因：它会直接读到下一个词元，而不是去预测它。


# %%
def dependence(layer, halves=None):
    """|change of the outputs at t| when the input at s moves, (s, t)."""
    bumped = np.repeat(x[:1], T + 1, axis=0)
    for s in range(T):
        bumped[s + 1, s] += 1.0
    out = np.asarray(layer(bumped)[0])
    parts = [out] if halves is None else np.split(out, 2, axis=-1)
    return [np.abs(p[1:] - p[:1]).sum(-1) for p in parts]


maps, titles = [], []
with notebooks.attempt("StackedRNN"):
    keras.utils.set_random_seed(0)
    maps += dependence(m.StackedRNN(3, U, cell="gru"))
    titles += ["StackedRNN, 3 GRU layers"]
with notebooks.attempt("BidirectionalRNN"):
    keras.utils.set_random_seed(0)
    maps += dependence(m.BidirectionalRNN(U, cell="gru"), halves=2)
    titles += ["bidirectional: forward half", "bidirectional: backward half"]
if maps:
    plots.heatmaps(
        np.log10(np.stack(maps)[None] + 1e-6),
        xlabel="output position t",
        ylabel="input changed at s",
        titles=titles,
        cmap="viridis",
        figsize=(3.2 * len(maps) + 1, 3.3),
        suptitle="log10 |change of the outputs|",
    )
    plt.show()

# %% [markdown]
# ## Padding and the mask（填充和掩码）
#
# A sequence of 7 real steps padded to 12 with a constant vector (as an
# embedded `<pad>` token would be). The backward RNN must read the real
# steps only, last one first: flipping the mask with the inputs puts the
# padding at the start of the reversed sequence, where it is skipped. With
# the mask, the outputs at the real positions match those of the unpadded
# sequence; without it, the backward half has read the padding first.
#
# 一个有 7 个真实时间步的序列，用一个常数向量填充到 12 步（就像嵌入后的 `<pad>`
# 词元那样）。反向网络必须只读真实的时间步，从最后一个读起：
# 把掩码和输入一起翻转，填充就到了翻转后序列的开头，在那里被跳过。有掩码时，
# 真实位置上的输出与未填充序列的输出一致；没有掩码时，反向的一半先读了填充。

# %%
with notebooks.attempt("BidirectionalRNN"):
    keras.utils.set_random_seed(0)
    layer = m.BidirectionalRNN(U, cell="gru")
    short = x[:1, :7]
    padded = np.concatenate([short, np.ones((1, T - 7, D), "float32")], 1)
    mask = np.arange(T)[None] < 7
    alone = np.asarray(layer(short)[0])[0]
    for name, kwargs in (("with the mask", {"mask": mask}), ("without", {})):
        out = np.asarray(layer(padded, **kwargs)[0])[0, :7]
        gap = np.abs(out - alone)  # (7, 2U): forward half, backward half
        print(
            f"{name:>14}: max |padded - unpadded| over the real steps:"
            f" forward {gap[:, :U].max():.1e}, backward {gap[:, U:].max():.1e}"
        )

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("12")
