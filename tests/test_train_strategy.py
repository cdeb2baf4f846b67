"""The settings `m2t train` picks per accelerator, on placements made here:
bfloat16 mixed precision on a TPU (float16 would need loss scaling there),
float16 on GPUs and CPUs; XLA on accelerators only."""

from __future__ import annotations

import pytest

strategy = pytest.importorskip("training.strategy")


@pytest.mark.parametrize(
    ("accelerator", "policy", "jit"),
    [
        ("tpu", "mixed_bfloat16", True),
        ("gpu", "mixed_float16", True),
        ("cpu", "mixed_float16", False),
    ],
)
def test_each_accelerator_gets_its_policy_and_jit(accelerator, policy, jit):
    import tensorflow as tf

    placement = strategy.Placement(
        strategy=tf.distribute.get_strategy(),
        kind="default",
        replicas=1,
        devices=["/device:CPU:0"],
        accelerator=accelerator,
    )
    assert strategy.mixed_policy(placement) == policy
    assert strategy.jit_default(placement) is jit
