"""Lesson 05: sequence models (序列模型) and k-step-ahead prediction.

Markov assumption (马尔可夫假设): the next value depends only on the last tau
values, so an autoregressive model (自回归模型) regresses x_t on them:

    x_t ~ f(x_{t-tau}, ..., x_{t-1})

For a series x_1, ..., x_T (0-based `x[0] .. x[T-1]` in code) the examples are

    features[j] = (x[j], x[j+1], ..., x[j+tau-1])      oldest first
    labels[j]   =  x[j+tau]                           j = 0 .. T-tau-1

so `features` is (T-tau, tau) and `labels` is (T-tau,); a label never
appears in its own features row.

k-step-ahead prediction (k步预测): predict x[t] from observations up to
x[t-k] only. The model predicts one step, then takes its own prediction as
the newest input, k times over; errors pile up, so the 64-step predictions
of d2l's noisy sine collapse to a nearly constant line.

Data: d2l's noisy sine `x_t = sin(0.01 t) + N(0, 0.2^2)`, T = 1000, tau = 4,
the first 600 examples for training (`m2t_data.noisy_sine`).

Reference: d2l 8.1 (9.1), "Sequence Models".
"""

import keras
import numpy as np
from keras import ops


def _check_tau(tau: int, length: int) -> None:
    if int(tau) != tau or tau <= 0:
        raise ValueError(f"`tau` must be a positive int, got {tau!r}")
    if tau >= length:
        raise ValueError(
            f"`tau` must be smaller than the series length {length}, "
            f"got {tau!r}"
        )


def lagged_features(x, tau: int):
    """The examples of an autoregressive model with window tau.

    Args:
        x: `(T,)` the series.
        tau: int, the number of past values used as features.

    Returns:
        `(features, labels)`: `features (T - tau, tau)` with row j holding
        `x[j], ..., x[j + tau - 1]` (oldest first), and `labels (T - tau,)`
        with `labels[j] = x[j + tau]`, NumPy arrays of x's dtype.
    """
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"`x` must be a 1-D series, got shape {x.shape}")
    _check_tau(tau, len(x))
    # TODO(l05): the module docstring's examples: features[j] = (x[j], x[j+1],
    #   ..., x[j+tau-1]), oldest first, and labels[j] = x[j+tau], for j = 0 ..
    #   n-1 with n = T - tau: x (T,) -> features (n, tau), labels (n,), NumPy
    #   arrays. A label never sits in its own row. Return (features, labels).
    #   Our solution is about 4 lines.
    #   中文：第 j 行特征是 x[j .. j+tau-1]，标签是 x[j+tau]；
    #   标签绝不出现在它自己的那一行里。
    # BEGIN SOLUTION
    n = len(x) - tau
    columns = [x[i : i + n] for i in range(tau)]  # tau x (n,)
    features = np.stack(columns, axis=1)  # (n, tau)
    labels = x[tau:]  # (n,)
    return features, labels
    # END SOLUTION


def autoregressive_mlp(tau: int = 4, num_hiddens: int = 10) -> keras.Model:
    """d2l's autoregressive MLP: tau inputs, one ReLU hidden layer, 1 output.

    Args:
        tau: int, the window (input size).
        num_hiddens: int, hidden units (d2l: 10).

    Returns:
        A `keras.Sequential` mapping `(N, tau)` to `(N, 1)`, built, with the
        weights `[hidden kernel (tau, num_hiddens), hidden bias
        (num_hiddens,), output kernel (num_hiddens, 1), output bias (1,)]`
        (Glorot-uniform kernels, zero biases, as d2l's Xavier init).
    """
    for name, value in (("tau", tau), ("num_hiddens", num_hiddens)):
        if int(value) != value or value <= 0:
            raise ValueError(f"`{name}` must be a positive int, got {value!r}")
    # TODO(l05): the model x_t ~ f(x_{t-tau}, ..., x_{t-1}) as a
    #   one-hidden-layer MLP named "autoregressive_mlp": an input of tau values,
    #   a hidden layer of num_hiddens ReLUs named "hidden", and an output layer
    #   of one unit named "output" with no activation (the series goes
    #   negative): (N, tau) -> (N, num_hiddens) -> (N, 1). Return the model. Our
    #   solution is about 8 lines.
    #   中文：一个隐藏层的回归多层感知机：隐藏层带 ReLU，输出层一个单元、
    #   不加激活函数。
    # BEGIN SOLUTION
    return keras.Sequential(
        [
            keras.Input(shape=(tau,)),
            keras.layers.Dense(num_hiddens, activation="relu", name="hidden"),
            keras.layers.Dense(1, name="output"),
        ],
        name="autoregressive_mlp",
    )
    # END SOLUTION


def k_step_predict(model, x, tau: int, k: int):
    """k-step-ahead predictions, feeding the model's predictions back in.

    Args:
        model: maps `(N, tau)` windows (oldest first) to `(N, 1)`.
        x: `(T,)` the observed series.
        tau: int, the model's window.
        k: int >= 1, how many steps ahead.

    Returns:
        `(T - tau - k + 1,)` NumPy array: entry j predicts `x[j + tau + k - 1]`
        from the observations `x[j], ..., x[j + tau - 1]` and the model's own
        k - 1 predictions after them. k = 1 is the one-step prediction
        `model(features)` of `lagged_features(x, tau)`.
    """
    x = np.asarray(x)
    _check_tau(tau, len(x))
    if int(k) != k or k <= 0 or len(x) - tau - k + 1 <= 0:
        raise ValueError(
            f"`k` must be an int in [1, T - tau] = [1, {len(x) - tau}], "
            f"got {k!r}"
        )
    # TODO(l05): row j of the n = T - tau - k + 1 rows starts from the window of
    #   observations (x[j], ..., x[j+tau-1]) (n, tau); each of the k steps
    #   predicts the value after the window, (n, tau) -> (n,), and the next
    #   window is the old one without its oldest value and with that prediction
    #   as its newest, still (n, tau). Only the first window holds observations:
    #   later ones never see the true x (that would be one-step prediction).
    #   Return the k-th step's predictions as a NumPy array, x (T,) -> (n,). Our
    #   solution is about 7 lines.
    #   中文：k 步预测：每一步把模型自己的预测滑进窗口；
    #   只有第一个窗口是观测值。
    # BEGIN SOLUTION
    n = len(x) - tau - k + 1
    window = np.stack([x[i : i + n] for i in range(tau)], axis=1)  # (n, tau)
    for _ in range(k):
        pred = ops.convert_to_numpy(model(window)).reshape(n)  # (n,)
        # The prediction becomes the newest input.
        window = np.concatenate([window[:, 1:], pred[:, None]], axis=1)
    return pred
    # END SOLUTION


def train_autoregressive_mlp(
    x,
    tau: int = 4,
    n_train: int = 600,
    epochs: int = 5,
    batch_size: int = 16,
    learning_rate: float = 0.01,
):
    """d2l's recipe: MSE, Adam(0.01), batches of 16, 5 epochs, 600 examples.

    Returns:
        `(model, losses)`: the trained model and the per-epoch training loss.
    """
    features, labels = lagged_features(x, tau)
    model = autoregressive_mlp(tau)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss="mse")
    history = model.fit(
        features[:n_train],
        labels[:n_train],
        batch_size=batch_size,
        epochs=epochs,
        verbose=0,
    )
    return model, history.history["loss"]


def main() -> None:
    """Train on the noisy sine and print the k-step prediction errors."""
    import m2t_data

    _, x = m2t_data.noisy_sine(T=1000, verbose=True)
    tau = 4
    model, losses = train_autoregressive_mlp(x, tau)
    print("training loss per epoch:", [round(v, 4) for v in losses])
    for k in (1, 4, 16, 64):
        pred = k_step_predict(model, x, tau, k)
        mse = float(np.mean((pred - x[tau + k - 1 :]) ** 2))
        print(f"{k:2d}-step-ahead MSE: {mse:.4f}")


if __name__ == "__main__":
    main()
