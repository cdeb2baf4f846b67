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
# # Lesson 15: attention pooling, Nadaraya-Watson (注意力汇聚)
#
# This notebook runs **your** `lessons/l15_attention_pooling.py` (reloaded
# after each save); the last cell grades it like `m2t grade 15`.
#
# Predict `f(x)` as a weighted average of the training targets, the weights
# a softmax of `-((x - x_i) w)^2 / 2`: the query is the test input, the keys
# the training inputs, the values their targets.
#
# 这个笔记本运行**你的**
# `lessons/l15_attention_pooling.py`（每次保存后重新加载）；最后一个单元格像
# `m2t grade 15` 那样给它评分。把 `f(x)` 预测为训练目标的加权平均，权重是 `-((x
# - x_i) w)^2 / 2` 的 softmax：查询是测试输入，键是训练输入，值是它们的目标。

# %%
import matplotlib.pyplot as plt
import numpy as np

from m2t import plots
from m2t.student import notebooks

m = notebooks.load("15")
x_train, y_train, x_test, y_test = m.make_data()


def show(predictions, title):
    plt.figure(figsize=(5, 3))
    plt.plot(x_test, y_test, label="truth")
    plt.plot(x_test, np.asarray(predictions), "--", label="prediction")
    plt.plot(x_train, y_train, "o", alpha=0.5, label="training data")
    plt.title(title)
    plt.legend()
    plt.show()


# %% [markdown]
# ## Non-parametric pooling (w = 1)（非参数的注意力汇聚（w = 1））
#
# Smooth, but too smooth: the weights spread over many neighbours.
#
# 平滑，但太平滑了：权重分散到了很多邻居上。

# %%
with notebooks.attempt("nw_predict"):
    predictions, weights = m.nw_predict(x_train, y_train, x_test)
    show(predictions, "w = 1")
    plots.heatmaps(
        np.asarray(weights),
        xlabel="sorted training inputs",
        ylabel="sorted test inputs",
    )
    plt.show()

# %% [markdown]
# ## Learning the width（学习宽度）
#
# Leave-one-out gradient descent on `w`: each training point is predicted
# from the others. A larger `w` makes the kernel narrower.
#
# 用留一法对 `w` 做梯度下降：每个训练点都由其他点来预测。`w` 越大，核越窄。

# %%
with notebooks.attempt("fit_width"):
    epochs = 3 if notebooks.short() else 10
    width, losses = m.fit_width(x_train, y_train, epochs=epochs)
    plt.figure(figsize=(4, 2.6))
    plt.plot(range(1, epochs + 1), losses, "o-")
    plt.xlabel("epoch")
    plt.ylabel("leave-one-out loss")
    plt.show()
    predictions, weights = m.nw_predict(x_train, y_train, x_test, width)
    show(predictions, f"learned w = {width:.2f}")
    plots.heatmaps(
        np.asarray(weights),
        xlabel="sorted training inputs",
        ylabel="sorted test inputs",
    )
    plt.show()

# %% [markdown]
# ## Grade（评分）

# %%
result = notebooks.grade("15")
