"""The contract's output is bound to the judge's reference on the weights
the layer was built with (`contract.contract_weights`,
`contract.contract_sublayer_weights`): a layer of the right shape whose
weights all move, but whose math is wrong, fails by the reference."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from graders.lib.contract import contract_sublayer_weights
from graders.lib.contract import contract_weights
from graders.lib.contract import expect_layer_contract
from graders.lib.judge import CheckFailed
from graders.lib.probes import layer_contract

X = np.random.default_rng(0).standard_normal((4, 5)).astype("float32")


class Affine(keras.layers.Layer):
    """x (B, 5) -> x W + b (B, 3); `shape_only` puts a tanh over it: the
    same shapes, every weight trained, other values."""

    def __init__(self, shape_only: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.shape_only = shape_only
        self.dense = keras.layers.Dense(3, name="dense")

    def build(self, input_shape):
        self.dense.build(input_shape)

    def call(self, x):
        y = self.dense(x)
        return keras.ops.tanh(y) if self.shape_only else y

    def get_config(self):
        return {**super().get_config(), "shape_only": self.shape_only}


def _judge(facts, kernel, bias):
    expect_layer_contract(
        facts,
        "Affine",
        output_shape=(4, 3),
        symbolic_shape=(None, 3),
        trainable=2,
        expected=X.astype(np.float64) @ kernel + bias,
    )


@pytest.mark.parametrize("by", ["shape", "sublayer"])
@pytest.mark.parametrize(
    "shape_only", [False, True], ids=["honest", "shape_only"]
)
def test_the_contract_output_is_the_judges_on_the_layers_weights(
    by, shape_only
):
    facts = layer_contract(lambda: Affine(shape_only), [X], symbolic=[(5,)])
    if by == "shape":
        kernel, bias = contract_weights(facts, "Affine", [(5, 3), (3,)])
    else:
        layout = {"dense": ("kernel", "bias")}
        kernel, bias = contract_sublayer_weights(facts, "Affine", layout)[
            "dense"
        ]
    if not shape_only:
        _judge(facts, kernel, bias)
        return
    with pytest.raises(CheckFailed, match="against the judge's reference"):
        _judge(facts, kernel, bias)


def test_weights_the_reference_cannot_take_fail_by_name():
    facts = layer_contract(lambda: Affine(), [X], symbolic=[(5,)])
    with pytest.raises(CheckFailed, match=r"\(3, 5\), \(3,\).*got \(5, 3\)"):
        contract_weights(facts, "Affine", [(3, 5), (3,)])
    with pytest.raises(CheckFailed, match="no trainable dense/gamma"):
        contract_sublayer_weights(facts, "Affine", {"dense": ("gamma",)})
