# Your exercise file: replace each `raise NotImplementedError` below its
# TODO with your code, then run `m2t grade l15`.
# (Generated from solutions/l15_attention_pooling.py by `m2t make-lessons`.)
"""Lesson 15: attention pooling by Nadaraya-Watson kernel regression
(注意力汇聚：Nadaraya-Watson 核回归).

Given n training pairs (x_i, y_i), predict y at a query x by a weighted
average of the y_i: the keys are the x_i, the values the y_i, and a key
close to the query gets a large weight (attention).

Non-parametric, with a Gaussian kernel:

    f(x) = sum_i softmax_i(-(x - x_i)^2 / 2) y_i

Parametric, with a learned width w (a Keras weight):

    f(x) = sum_i softmax_i(-((x - x_i) w)^2 / 2) y_i

A larger w makes a narrower kernel: the prediction follows the nearest keys
more closely. The weights of each query are non-negative and sum to 1.

Training w by leave-one-out: each training point x_i is predicted from all
the other points (keys and values without point i), and w minimises the sum
of squared errors sum_i (f(x_i) - y_i)^2. Without leaving x_i out, the best
w would be infinite (each point predicting itself).

The loss is twice d2l's: d2l trains with 1/2 sum_i (f(x_i) - y_i)^2 (MXNet's
L2Loss; its PyTorch tab halves the squared error to match) at learning rate
0.5 from w drawn in [0, 1). Same minimiser, twice the gradient: lr 0.5 here
is lr 1.0 in d2l's units. The course starts w at 2 because from w below 1
the first step overshoots far (to w of about 5 to 26 here; 3 to 13 with
d2l's halved loss), and five steps from 2 reach w of about 4.2.

Prediction: the queries are the test inputs, the keys and values all the
training pairs.

Data (make_data): y = 2 sin(x) + x^0.8 + noise, noise ~ N(0, 0.5^2), 50
training inputs x sorted, uniform in [0, 5); test inputs 0, 0.1, ..., 4.9.

Reference: Nadaraya 1964; Watson 1964; d2l 10.2 (11.2).
"""

import keras
import numpy as np
import tensorflow as tf  # the training loop needs the backend's autodiff
from keras import ops


def true_function(x):
    """The function the data come from: 2 sin(x) + x^0.8."""
    return 2.0 * np.sin(x) + np.asarray(x) ** 0.8


def make_data(n_train: int = 50, seed: int = 0):
    """The lesson's data, as NumPy float32 arrays.

    Returns:
        `(x_train (n,), y_train (n,), x_test (50,), y_test (50,))`:
        x_train sorted uniform in [0, 5), y_train = true_function + N(0,
        0.5^2) noise; x_test = 0, 0.1, ..., 4.9 and y_test noise-free.
    """
    rng = np.random.default_rng(seed)
    x_train = np.sort(rng.uniform(0.0, 5.0, n_train)).astype("float32")
    noise = rng.normal(0.0, 0.5, n_train)
    y_train = (true_function(x_train) + noise).astype("float32")
    x_test = np.arange(0.0, 5.0, 0.1).astype("float32")
    return x_train, y_train, x_test, true_function(x_test).astype("float32")


def attention_pool(queries, keys, values, width=1.0):
    """Nadaraya-Watson attention pooling with a Gaussian kernel.

    Args:
        queries: `(T,)` query inputs.
        keys: `(S,)` (the same keys for every query) or `(T, S)` (its own
            keys per query).
        values: the values of the keys, shaped like `keys`.
        width: the kernel width w, a float or a `(1,)` weight; 1 gives the
            non-parametric estimate.

    Returns:
        `(predictions, weights)`: `predictions (T,)`, the weighted average
        of the values; `weights (T, S)`, `softmax(-((q - k) w)^2 / 2)` over
        the keys (each row sums to 1).
    """
    queries = ops.convert_to_tensor(queries)
    keys = ops.convert_to_tensor(keys, dtype=queries.dtype)
    values = ops.convert_to_tensor(values, dtype=queries.dtype)
    # TODO(l15): the module docstring's pooling, queries (T,), keys and
    #   values (S,) or (T, S) -> (T,) predictions and (T, S) weights.
    #   With s_ti = -((q_t - k_ti) w)^2 / 2, w = width in the queries'
    #   dtype (a float or a (1,) weight): weights[t, i] = exp(s_ti) /
    #   Σ_j exp(s_tj), normalised over the keys (the last axis), and
    #   predictions[t] = Σ_i weights[t, i] v_ti. (S,) keys and values are
    #   shared by every query. Return (predictions, weights).
    #   Our solution is about 4 lines.
    #   中文：高斯核评分 -((q - k) w)^2 / 2，在键上规范化成权重，
    #   预测是值的加权平均。
    raise NotImplementedError("l15: attention_pool")


def leave_one_out(x, y):
    """Keys and values for leave-one-out training.

    Args:
        x: `(n,)` training inputs.
        y: `(n,)` training targets.

    Returns:
        `(keys, values)`, each `(n, n - 1)`: row i holds all the training
        inputs (targets) except the i-th, in their original order.
    """
    x = ops.convert_to_tensor(x)
    y = ops.convert_to_tensor(y)
    n = x.shape[0]
    # TODO(l15): x, y (n,) -> (n, n - 1) keys and values: row i of keys is x
    #   without its i-th entry, the others in their original order, so
    #   keys[i, j] = x[j] for j < i and x[j + 1] for j >= i; values the
    #   same for y. Our solution is about 4 lines.
    #   中文：第 i 行的键和值是除第 i 个之外的全部训练样本。
    raise NotImplementedError("l15: leave_one_out")


def nw_predict(x_train, y_train, x_test, width=1.0):
    """Nadaraya-Watson predictions at the test inputs.

    Args:
        x_train: `(n,)` training inputs (the keys).
        y_train: `(n,)` training targets (the values).
        x_test: `(T,)` test inputs.
        width: the kernel width (1: non-parametric).

    Returns:
        `(predictions (T,), weights (T, n))`.
    """
    # TODO(l15): x_test (T,), x_train and y_train (n,) -> (T,) predictions
    #   and (T, n) weights: the test inputs are the queries, all the
    #   training pairs the keys and values, pooled with the given width.
    #   Our solution is 1 line.
    #   中文：查询是测试输入，键和值是训练数据对，宽度不变。
    raise NotImplementedError("l15: nw_predict")


class NWKernelRegression(keras.layers.Layer):
    """Parametric Nadaraya-Watson regression: one learned kernel width w.

    Args:
        initial_width: float, the starting value of w.

    Call arguments:
        queries: `(T,)`.
        keys: `(S,)` or `(T, S)`.
        values: shaped like keys.
        return_attention_weights: bool, also return the `(T, S)` weights.

    Returns:
        `(T,)` predictions, or `((T,), (T, S))` with the weights.

    Weights: `w (1,)`.
    """

    def __init__(self, initial_width: float = 2.0, **kwargs):
        super().__init__(**kwargs)
        self.initial_width = float(initial_width)

    def build(self, queries_shape, keys_shape=None, values_shape=None):
        self.w = self.add_weight(
            shape=(1,),
            initializer=keras.initializers.Constant(self.initial_width),
            name="w",
        )

    def call(self, queries, keys, values, return_attention_weights=False):
        predictions, weights = attention_pool(queries, keys, values, self.w)
        if return_attention_weights:
            return predictions, weights
        return predictions

    def get_config(self):
        return {**super().get_config(), "initial_width": self.initial_width}


def fit_width(
    x_train,
    y_train,
    epochs: int = 5,
    learning_rate: float = 0.5,
    initial_width: float = 2.0,
):
    """Learn the kernel width by leave-one-out, full-batch gradient descent.

    The loss is the sum of squared errors over the training points, each
    predicted from the others; plain SGD with `learning_rate`.

    Args:
        x_train: `(n,)` training inputs.
        y_train: `(n,)` training targets.
        epochs: int, the number of gradient steps.
        learning_rate: float.
        initial_width: float, the starting w (2: from w < 1 the first step
            of the summed loss overshoots far).

    Returns:
        `(width, losses)`: the learned w (a float) and the loss at the start
        of each epoch (a list of `epochs` floats).
    """
    if int(epochs) != epochs or epochs <= 0:
        raise ValueError(f"`epochs` must be a positive int, got {epochs!r}")
    model = NWKernelRegression(initial_width)
    optimizer = keras.optimizers.SGD(learning_rate)
    x_train = ops.convert_to_tensor(x_train, "float32")
    y_train = ops.convert_to_tensor(y_train, "float32")
    losses = []
    # TODO(l15): train w by leave-one-out, the module docstring's last
    #   paragraph. keys and values (n, n - 1) come from leave_one_out;
    #   each epoch e, model(x_train, keys, values): (n,) -> (n,)
    #   predictions f(x_i), and L(w) = Σ_i (f(x_i) - y_i)^2 -> scalar.
    #   losses[e] = float(L) before the update, then one step of
    #   `optimizer` with dL/dw on model.trainable_weights (the backend,
    #   TensorFlow here, differentiates). Our solution is about 8 lines.
    #   中文：用留一法的平方误差之和对宽度 w 做全批量梯度下降，记下每轮的损失。
    raise NotImplementedError("l15: fit_width")
    return float(ops.convert_to_numpy(model.w)[0]), losses


if __name__ == "__main__":
    x_train, y_train, x_test, y_test = make_data()
    plain, _ = nw_predict(x_train, y_train, x_test)
    width, losses = fit_width(x_train, y_train)
    learned, _ = nw_predict(x_train, y_train, x_test, width)
    for name, pred in (("w = 1", plain), (f"w = {width:.2f}", learned)):
        error = float(np.mean((np.asarray(pred) - y_test) ** 2))
        print(f"{name}: test mean squared error {error:.4f}")
