"""Judge side of the Keras layer contract: the verdicts on the facts that
`probes.layer_contract` and `probes.value_errors` measured.

    facts = run_contract(...)            # a probe calling layer_contract
    expect_layer_contract(facts, "GRUCell", output_shape=(B, U),
                          symbolic_shape=(None, U), trainable=3)
    expect_value_errors(facts["errors"])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.tolerances import F32


def expect_layer_contract(
    facts: Mapping[str, Any],
    name: str,
    *,
    output_shape: tuple[int, ...],
    trainable: int,
    symbolic_shape: tuple[int | None, ...] | None = None,
    on: str = "keras.Input (None batch)",
    weights: int | None = None,
    detail: str = "",
) -> None:
    """The layer `name` keeps Keras's contract.

    Args:
        facts: what `probes.layer_contract` returned.
        name: the layer as the student knows it, e.g. "GRUCell" or
            "MLP(64, 10)".
        output_shape: its (first) output's shape on the concrete inputs.
        trainable: how many trainable weights it must have.
        symbolic_shape: the output's shape on `keras.Input`s, None batch
            (None: the probe made no symbolic call).
        on: what the symbolic call ran on, for the message.
        weights: how many weights in all, if that is checked too.
        detail: which weights they are, e.g. " (kernel, bias)".
    """
    expect_shape(facts["output_shape"], output_shape, f"{name} output")
    if symbolic_shape is not None:
        expect_shape(facts["symbolic_shape"], symbolic_shape, f"{name} on {on}")
    expect(
        facts["trainable"] == trainable,
        f"{name} should have {trainable} trainable weights{detail}, has "
        f"{facts['trainable']}.",
    )
    if weights is not None:
        expect(
            facts["weights"] == weights,
            f"{name} should have {weights} weights{detail}, has "
            f"{facts['weights']}.",
        )
    expect(
        facts["config_roundtrip_diff"] == 0.0,
        f"{name}: from_config(get_config()) gives a different output.",
    )
    expect(
        facts["grads_finite"],
        f"{name}: some weight gets no or a non-finite gradient (is every "
        "sublayer used?).",
    )
    unmoved = ", ".join(facts["unmoved_weights"])
    expect(
        facts["step_changes_weights"],
        f"{name}: one SGD step leaves {unmoved} unchanged; every trainable "
        "weight should reach the output (is it used, and not multiplied "
        "by 0?).",
    )


def expect_dropout_only_in_training(
    outputs: tuple[Any, Any, Any],
    name: str,
    *,
    dropout: str = "the dropout layer",
    tol: Mapping[str, float] = F32,
) -> None:
    """A layer built with dropout=0.5 drops only in training.

    Args:
        outputs: (inference, inference again, training) outputs of one
            layer on the same inputs, as `probes.dropout_outputs` returns.
        name: the layer, for the messages.
        dropout: which sublayers must get `training`, for the hint.
        tol: how close the two inference outputs must be.
    """
    first, second, trained = (np.asarray(o) for o in outputs)
    expect_close(
        second, first, f"{name} called twice with training=False", tol=tol
    )
    expect(
        not np.allclose(trained, first),
        f"{name}: with dropout=0.5 and training=True the output should "
        f"differ from inference; pass `training` to {dropout}.",
    )


def expect_value_errors(
    errors: Mapping[str, str], *, quoted: bool = False, where: str = ""
) -> None:
    """Each bad argument raised a ValueError that names it.

    Args:
        errors: {argument name: the ValueError's message ("" when none
            was raised)}, as `probes.value_errors` returns it.
        quoted: the name must appear in backticks (`units`), not just as
            a word.
        where: what was called, to lead the message (e.g. a function's
            name when several take the same argument).
    """
    lead = f"{where}: a" if where else "A"
    for arg, message in errors.items():
        named = f"`{arg}`" if quoted else arg
        expect(
            named in message,
            f"{lead} bad `{arg}` should raise ValueError naming it, got "
            f"{message!r}.",
        )


def expect_bad_values_named(
    errors: Mapping[str, str], call: str, arg: str
) -> None:
    """Each bad value of `arg` made `call(value)` raise a ValueError naming
    both `arg` and the value.

    Args:
        errors: {the value, as text: the ValueError's message ("" when none
            was raised)}, as `probes.value_errors` returns it.
        call: the callable's name, e.g. "GRUCell".
        arg: the argument's name, e.g. "units".
    """
    for value, message in errors.items():
        expect(
            arg in message and value in message,
            f"{call}({value}) should raise ValueError naming `{arg}` and the "
            f"value, got {message!r}.",
        )
