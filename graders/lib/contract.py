"""Judge side of the Keras layer contract: the verdicts on the facts that
`probes.layer_contract` and `probes.value_errors` measured.

    facts = run_contract(...)            # a probe calling layer_contract
    expect_layer_contract(facts, "GRUCell", output_shape=(B, U),
                          symbolic_shape=(None, U), trainable=3)
    expect_value_errors(facts["errors"])
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import numpy as np

from graders.lib import properties
from graders.lib.judge import expect
from graders.lib.judge import expect_close
from graders.lib.judge import expect_shape
from graders.lib.judge import fail
from graders.lib.messages import say
from graders.lib.tolerances import F32
from graders.lib.tolerances import GRAD
from graders.lib.tolerances import GRAD_EPS


def layer_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    """The verdicts on what `probes.layer_contract` measured, drawn here in
    the judge from its values (the probe reports none).

    Returns:
        `facts` and `config_roundtrip_diff` (max |diff| of the outputs
        before and after `from_config(get_config())`), `grads_finite`
        (every trainable weight got a finite gradient), `unmoved_weights`
        ("path (shape)" of each weight the step left unchanged),
        `step_changes_weights` (none was left unchanged) and
        `step_consistent` (each weight moved by exactly -0.1 x its
        gradient, as SGD moves it: facts that contradict each other fail).
    """
    step = facts["step"]
    out = np.asarray(facts["output"], np.float64)
    again = np.asarray(facts["roundtrip_output"], np.float64)
    diff = (
        float(np.max(np.abs(again - out), initial=0.0))
        if again.shape == out.shape
        else float("inf")
    )
    triples = list(
        zip(step["before"], step["gradients"], step["after"], strict=True)
    )
    finite = all(
        g is not None and bool(np.all(np.isfinite(g))) for _, g, _ in triples
    )
    unmoved = [
        path
        for path, (b, _, a) in zip(step["paths"], triples, strict=True)
        if np.array_equal(np.asarray(b), np.asarray(a))
    ]
    consistent = len(step["paths"]) == len(triples) and all(
        np.shape(a) == np.shape(b)
        and (
            np.array_equal(a, b)
            if g is None
            else np.shape(g) == np.shape(b)
            and np.allclose(
                np.asarray(a, np.float64),
                np.asarray(b, np.float64) - 0.1 * np.asarray(g, np.float64),
                **F32,
            )
        )
        for b, g, a in triples
    )
    return {
        **facts,
        "config_roundtrip_diff": diff,
        "grads_finite": finite,
        "unmoved_weights": unmoved,
        "step_changes_weights": not unmoved,
        "step_consistent": consistent,
    }


def contract_weights(
    facts: Mapping[str, Any],
    name: str,
    shapes: list[tuple[int, ...]],
) -> list[np.ndarray]:
    """The trainable weights the contract's layer was built with (what
    `facts["step"]["before"]` holds), in float64, for the judge's reference
    to compute `expect_layer_contract`'s `expected` on.

    Args:
        facts: what `probes.layer_contract` returned.
        name: the layer, for the message.
        shapes: the shapes the reference takes them in, in the order of
            `layer.trainable_weights` (the order `set_weights` uses in the
            value checks): any other layout fails here, since the output
            could not be bound to the reference.
    """
    weights = [np.asarray(w, np.float64) for w in facts["step"]["before"]]
    got = [tuple(w.shape) for w in weights]
    want = [tuple(s) for s in shapes]
    expect(
        got == want,
        say(
            "contract.weights_layout",
            name=name,
            layout=", ".join(map(str, want)),
            got=", ".join(map(str, got)) or "-",
        ),
    )
    return weights


def contract_sublayer_weights(
    facts: Mapping[str, Any],
    name: str,
    layout: Mapping[str, tuple[str, ...]],
) -> dict[str, list[np.ndarray]]:
    """The trainable weights the contract's layer was built with, by the
    sublayer that holds them (their Keras paths below the layer itself),
    in float64: {"conv1": [kernel, bias], ...} as the judge's references
    take them.

    Args:
        facts: what `probes.layer_contract` returned.
        name: the layer, for the message.
        layout: sublayer path -> its weights' names in the reference's
            order, e.g. {"conv_block_0/bn": ("gamma", "beta")} ("" for the
            layer's own weights); a weight the layer lacks fails here.
    """
    step = facts["step"]
    named = {
        path.split(" (")[0].split("/", 1)[-1]: np.asarray(w, np.float64)
        for path, w in zip(step["paths"], step["before"], strict=True)
    }

    def key(sub: str, w: str) -> str:
        return f"{sub}/{w}" if sub else w

    missing = [
        key(sub, w)
        for sub, ws in layout.items()
        for w in ws
        if key(sub, w) not in named
    ]
    expect(
        not missing,
        say("contract.weights_missing", name=name, missing=", ".join(missing)),
    )
    return {sub: [named[key(sub, w)] for w in ws] for sub, ws in layout.items()}


def expect_layer_contract(
    facts: Mapping[str, Any],
    name: str,
    *,
    output_shape: tuple[int, ...],
    trainable: int,
    symbolic_shape: tuple[int | None, ...] | None = None,
    on: str | None = None,
    weights: int | None = None,
    detail: str = "",
    expected: Any = None,
    tol: Mapping[str, float] = F32,
) -> None:
    """The layer `name` keeps Keras's contract, and what the probe reports
    of it is bound to the judge's own values: its output and that of its
    round trip equal `expected`, the judge's reference on the same inputs
    (a forged or shape-only output fails, whatever its other facts say).

    Args:
        facts: what `probes.layer_contract` returned (its verdicts are
            drawn here, `layer_facts`).
        name: the layer as the student knows it, e.g. "GRUCell" or
            "MLP(64, 10)".
        output_shape: its (first) output's shape on the concrete inputs.
        trainable: how many trainable weights it must have.
        symbolic_shape: the output's shape on `keras.Input`s, None batch
            (None: the probe made no symbolic call).
        on: what the symbolic call ran on, for the message (None: "keras.Input
            (None batch)", in the run's language).
        weights: how many weights in all, if that is checked too.
        detail: which weights they are, e.g. " (kernel, bias)".
        expected: the judge's reference output (float64) on the contract's
            inputs (and, for a layer with weights, on the weights
            `facts["step"]["before"]` holds or those the probe set).
        tol: how close the outputs must be to `expected`.
    """
    expect_shape(
        facts["output_shape"], output_shape, say("contract.output", name=name)
    )
    if symbolic_shape is not None:
        on = on or say("contract.symbolic_default")
        expect_shape(
            facts["symbolic_shape"],
            symbolic_shape,
            say("contract.symbolic_on", name=name, on=on),
        )
    expect(
        facts["trainable"] == trainable,
        say(
            "contract.trainable",
            name=name,
            expected=trainable,
            detail=detail,
            got=facts["trainable"],
        ),
    )
    if weights is not None:
        expect(
            facts["weights"] == weights,
            say(
                "contract.weights",
                name=name,
                expected=weights,
                detail=detail,
                got=facts["weights"],
            ),
        )
    if expected is not None:
        expect_close(
            facts["output"],
            expected,
            say("contract.output_value", name=name),
            tol=tol,
        )
        expect_close(
            facts["roundtrip_output"],
            expected,
            say("contract.roundtrip_value", name=name),
            tol=tol,
        )
    facts = layer_facts(facts)
    expect(
        facts["step_consistent"],
        say("contract.step_forged", name=name),
    )
    expect(
        facts["config_roundtrip_diff"] == 0.0,
        say("contract.config", name=name),
    )
    expect(facts["grads_finite"], say("contract.gradients", name=name))
    unmoved = ", ".join(facts["unmoved_weights"])
    expect(
        facts["step_changes_weights"],
        say("contract.unmoved", name=name, weights=unmoved),
    )


def expect_dropout_only_in_training(
    outputs: tuple[Any, Any, Any],
    name: str,
    *,
    dropout: str | None = None,
    tol: Mapping[str, float] = F32,
    expected: Any = None,
) -> None:
    """A layer built with dropout=0.5 drops only in training, its
    inference output bound to the judge's reference (`expected`): two
    outputs that merely agree with each other are no evidence.

    Args:
        outputs: (inference, inference again, training) outputs of one
            layer on the same inputs, as `probes.dropout_outputs` returns.
        name: the layer, for the messages.
        dropout: which sublayers must get `training`, for the hint (None:
            "the dropout layer", in the run's language).
        tol: how close the two inference outputs must be.
        expected: the judge's reference for the inference output (float64,
            on the probe's inputs and weights).
    """
    first, second, trained = (np.asarray(o) for o in outputs)
    if expected is not None:
        expect_close(
            first,
            expected,
            say("contract.inference_value", name=name),
            tol=F32,
        )
    expect_close(
        second,
        first,
        say("contract.inference_twice", name=name),
        tol=tol,
        properties=[properties.same_twice(first)],
    )
    expect(
        not np.allclose(trained, first),
        say(
            "contract.dropout_inactive",
            name=name,
            dropout=dropout or say("contract.dropout_layer"),
        ),
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
    lead = (
        say("contract.bad_argument_lead_where", where=where)
        if where
        else say("contract.bad_argument_lead")
    )
    for arg, message in errors.items():
        named = f"`{arg}`" if quoted else arg
        expect(
            named in message,
            say(
                "contract.bad_argument",
                lead=lead,
                arg=arg,
                message=repr(message),
            ),
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
            say(
                "contract.bad_value",
                call=call,
                value=value,
                arg=arg,
                message=repr(message),
            ),
        )


def centred_differences(
    loss: Callable[[np.ndarray], float], x: np.ndarray, eps: float = GRAD_EPS
) -> np.ndarray:
    """The judge's own gradient of the float64 scalar `loss` at `x` (any
    shape; the result has x's shape): (loss(x + eps e_i) - loss(x - eps
    e_i)) / (2 eps) for each entry i."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (float(loss(up)) - float(loss(down))) / (2 * eps)
    return grad


def state_centred_differences(
    step: Callable[[np.ndarray], tuple[Any, Any]],
    h0: np.ndarray,
    probe_out: np.ndarray,
    probe_state: np.ndarray,
) -> np.ndarray:
    """`centred_differences` of sum(out * probe_out) + sum(state *
    probe_state) in the initial state h0 (B, U), where `out, state =
    step(h)` is the judge's float64 reference on fixed inputs: what
    `probes.state_gradient` measures on the tape."""

    def loss(h: np.ndarray) -> float:
        out, state = step(h)
        return float(np.sum(out * probe_out) + np.sum(state * probe_state))

    return centred_differences(loss, h0)


def expect_gradient(
    got: Any,
    expected: np.ndarray,
    what: str,
    *,
    tol: Mapping[str, float] = GRAD,
    hint: str = "",
) -> None:
    """The tape gradient a probe returned (`probes.tape_gradient`) equals
    the judge's own: `expected`, from a `@reference` that takes the
    `centred_differences` of its float64 loss (never the student's code).

    Args:
        got: the student's tape gradient.
        expected: the judge's gradient, of the same shape.
        what: the gradient, for the message, e.g. "d(loss)/d(queries) vs
            centred differences" ("of the reference" follows).
        tol: see `tolerances.GRAD`.
        hint: shown on failure (e.g. which sublayer computes in float32).
    """
    expect_close(
        got,
        expected,
        say("contract.gradient", what=what),
        tol=tol,
        hint=hint,
    )


def expect_computes_in(
    facts: Mapping[str, Any],
    dtype: str,
    name: str,
    *,
    diagnoses: Mapping[Any, str] | None = None,
) -> None:
    """A layer built with `dtype` computes in it throughout.

    Args:
        facts: `probes.layers_off_dtype`'s, from a call on a `dtype` input.
        dtype: e.g. "float64".
        name: the layer, for the message.
        diagnoses: mistake -> the layer class ("Add") whose presence among
            the off-dtype layers shows it.
    """
    off, got = list(facts["off"]), facts["output_dtype"]
    if not off and got == dtype:
        return
    where = ", ".join(off) or say("computes_in.own_op", got=got)
    shown = [
        mistake
        for mistake, cls in (diagnoses or {}).items()
        if any(entry.startswith(f"{cls} ") for entry in off)
    ]
    fail(
        [say("computes_in.other", name=name, dtype=dtype, where=where)],
        shown[0] if len(shown) == 1 else None,
    )
