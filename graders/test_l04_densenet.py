"""Grader for lesson 04: DenseNet's ConvBlock, DenseBlock, TransitionBlock
and the whole network.

* Blocks against a float64 NumPy reference with the grader's weights
  transferred into the named sublayers (nonzero biases; batch-norm moving
  statistics away from 0 and 1). Batch norm is checked both ways, named in
  each check: `inference` (training=False, the moving statistics the grader
  set) and `training` (training=True, the batch's mean and biased variance
  over B, H, W).
* The brief's shapes: DenseBlock(2, 10) on (4, 8, 8, 3) gives (4, 8, 8, 23);
  TransitionBlock(10) then gives (4, 4, 4, 10).
* densenet() on (1, 96, 96, 1): its layer table and parameter counts
  against the closed form (shape inference, no weights initialised); its
  stem by value, with the grader's weights, against the float64 forward
  pass.
* A dense block's tape gradient against centred differences of the float64
  reference (the judge's own, at the same weights).
* Smoke: a narrow DenseNet trains on generated images.

Block inputs give every axis its own size (B=2, H=6, W=5, C=3).
"""

import numpy as np
import pytest

from graders.lib.cnn_judge import expect_loss_falls
from graders.lib.cnn_judge import expect_network_table
from graders.lib.cnn_probes import first_layer_output
from graders.lib.cnn_probes import layer_table
from graders.lib.cnn_probes import train_steps
from graders.lib.cnn_probes import transfer_named
from graders.lib.cnn_references import BN_ROLES
from graders.lib.cnn_references import avg_pool
from graders.lib.cnn_references import batch_norm
from graders.lib.cnn_references import bn_params
from graders.lib.cnn_references import conv2d
from graders.lib.cnn_references import conv_params
from graders.lib.cnn_references import forward
from graders.lib.cnn_references import init_weights
from graders.lib.cnn_references import random_weight
from graders.lib.cnn_references import relu
from graders.lib.cnn_references import simulate
from graders.lib.contract import centred_differences
from graders.lib.contract import contract_sublayer_weights
from graders.lib.contract import expect_gradient
from graders.lib.contract import expect_layer_contract
from graders.lib.contract import expect_value_errors
from graders.lib.data import toy_images
from graders.lib.fixtures import reference
from graders.lib.judge import Mistake
from graders.lib.judge import expect_count
from graders.lib.judge import expect_reference
from graders.lib.judge import expect_shape
from graders.lib.judge import memo
from graders.lib.messages import say
from graders.lib.probes import layer_contract
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l04_densenet")
DENSENET_INPUT = (1, 96, 96, 1)
X_SHAPE = (2, 6, 5, 3)
STEM_CHANNELS = 4
STEM_INPUT = (2, 13, 10, 1)
"""(B, H, W, 1): the stem halves H and W twice, (2, 13, 10) -> (2, 4, 3)."""

# d2l's DenseNet on (1, 96, 96, 1), channels-last (the seed names DenseNet
# without printing its table; this is what d2l's network gives).
DENSENET_TABLE = [
    ("Sequential", (1, 24, 24, 64)),
    ("DenseBlock", (1, 24, 24, 192)),
    ("TransitionBlock", (1, 12, 12, 96)),
    ("DenseBlock", (1, 12, 12, 224)),
    ("TransitionBlock", (1, 6, 6, 112)),
    ("DenseBlock", (1, 6, 6, 240)),
    ("TransitionBlock", (1, 3, 3, 120)),
    ("DenseBlock", (1, 3, 3, 248)),
    ("BatchNormalization", (1, 3, 3, 248)),
    ("ReLU", (1, 3, 3, 248)),
    ("GlobalAveragePooling2D", (1, 248)),
    ("Dense", (1, 10)),
]

# ---------------------------------------------------------------- mistakes
POST_ACTIVATION = Mistake(
    "conv_block_post_activation",
    "the ConvBlock convolves first (conv, batch norm, ReLU); DenseNet's "
    "ConvBlock is batch norm, ReLU, then the convolution.",
)
ADDS = Mistake(
    "dense_block_adds",
    "the dense block adds each ConvBlock's output to its input (that is "
    "ResNet); DenseNet concatenates them on the channels: [X, Y].",
)
CONCAT_AXIS = Mistake(
    "dense_block_concat_channels_first",
    "the dense block concatenates on axis 1, PyTorch's channel axis; images "
    "here are (B, H, W, C): concatenate on axis -1.",
)
NO_POOL = Mistake(
    "transition_without_pooling",
    "the transition block leaves out its 2x2 average pooling, so the height "
    "and width are not halved.",
)
KEEPS_CHANNELS = Mistake(
    "densenet_transition_keeps_channels",
    "the transition blocks keep the channels: halve the running channel "
    "count (num_channels //= 2) before each TransitionBlock.",
)
MISTAKES = (POST_ACTIVATION, ADDS, CONCAT_AXIS, NO_POOL, KEEPS_CHANNELS)


# --------------------------------------------------- float64 references
@reference
def ref_conv_block(x, w, training, mistake=None):
    """w: {"bn": [gamma, beta, mean, var], "conv": [kernel, bias]}."""
    if mistake is POST_ACTIVATION:
        y = conv2d(x, *w["conv"], 1, "same")
        return relu(batch_norm(y, *w["bn"], training=training))
    y = relu(batch_norm(x, *w["bn"], training=training))
    return conv2d(y, *w["conv"], 1, "same")


@reference
def ref_dense_block(x, ws, training, mistake=None):
    """ws: one ConvBlock weight dict per block."""
    X = np.asarray(x, np.float64)
    for w in ws:
        Y = ref_conv_block(X, w, training, mistake)
        if mistake is ADDS:
            X = X + Y
        else:
            X = np.concatenate([X, Y], axis=1 if mistake is CONCAT_AXIS else -1)
    return X


@reference
def ref_transition(x, w, training, mistake=None):
    y = relu(batch_norm(x, *w["bn"], training=training))
    y = conv2d(y, *w["conv"])
    return y if mistake is NO_POOL else avg_pool(y, 2, 2)


@reference
def ref_dense_block_gradient(x, ws, probe_weights):
    """d sum(out * probe_weights) / d(inputs) of the float64 dense block in
    inference (training=False): centred differences, of x's shape."""
    return centred_differences(
        lambda v: np.sum(ref_dense_block(v, ws, False) * probe_weights), x
    )


def block_weights(c_in, channels, k, rng):
    return {
        "bn": [random_weight((c_in,), role, rng) for role in BN_ROLES],
        "conv": [
            random_weight((k, k, c_in, channels), "kernel", rng),
            random_weight((channels,), "bias", rng),
        ],
    }


# ------------------------------------------ architectures in closed form
def dense_block(num_convs, growth):
    def fn(shape):
        trainable = moving = 0
        c = shape[-1]
        for _ in range(num_convs):
            t, n = bn_params(c)
            trainable += t + conv_params(3, c, growth)
            moving += n
            c += growth
        return (*shape[:-1], c), trainable, moving

    return ("block", "DenseBlock", fn)


def transition_block(channels):
    def fn(shape):
        t, n = bn_params(shape[-1])
        out = (shape[0], shape[1] // 2, shape[2] // 2, channels)
        return out, t + conv_params(1, shape[-1], channels), n

    return ("block", "TransitionBlock", fn)


def densenet_spec(
    classes=10, channels=64, growth=32, arch=(4, 4, 4, 4), mistake=None
):
    spec = [
        (
            "seq",
            [
                ("conv", channels, 7, 2, "same", None),
                ("bn",),
                ("relu",),
                ("pool", "max", 3, 2, "same"),
            ],
        )
    ]
    for i, num_convs in enumerate(arch):
        spec.append(dense_block(num_convs, growth))
        channels += num_convs * growth
        if i != len(arch) - 1:
            if mistake is not KEEPS_CHANNELS:
                channels //= 2
            spec.append(transition_block(channels))
    return [*spec, ("bn",), ("relu",), ("gap",), ("dense", classes, None)]


# ------------------------------------------------------------------ probes
@lesson.probe
def run_block(m, kind, args, x, weights, training):
    if kind == "dense_block":
        block = m.DenseBlock(*args)
        block(x, training=False)  # build
        used = [
            transfer_named(sub, w)
            for sub, w in zip(block.conv_blocks, weights, strict=False)
        ]
    else:
        block = (
            m.ConvBlock(*args)
            if kind == "conv_block"
            else (m.TransitionBlock(*args))
        )
        block(x, training=False)  # build
        used = transfer_named(block, weights)
    return block(x, training=training), used


@lesson.probe
def run_stem(m, x, weights, shape):
    """b1 of densenet(num_channels=STEM_CHANNELS) on x in
    inference, with the judge's weights in its weights in order (conv
    kernel and bias, then batch norm's gamma, beta, moving mean and
    variance); returns (output, the weights it ended up with)."""
    return first_layer_output(
        m.densenet(num_channels=STEM_CHANNELS), x, weights, shape
    )


@lesson.probe
def run_brief_shapes(m, x):
    dense = m.DenseBlock(2, 10)(x)
    return tuple(dense.shape), tuple(m.TransitionBlock(10)(dense).shape)


@lesson.probe
def run_gradient(m, x, weights, probe_weights):
    """The tape gradient of sum(out * probe_weights) by the inputs, of
    DenseBlock(2, 2, dtype="float64") in inference with the judge's weights
    (one dict per ConvBlock)."""
    import keras

    block = m.DenseBlock(2, 2, dtype="float64")
    block(x, training=False)  # build
    for sub, w in zip(block.conv_blocks, weights, strict=False):
        transfer_named(sub, w)
    return tape_gradient(
        lambda v: keras.ops.sum(block(v, training=False) * probe_weights), x
    )


@lesson.probe
def run_contract(m, kind, x):
    make, bad = {
        "conv_block": (
            lambda: m.ConvBlock(4),
            {"num_channels": lambda: m.ConvBlock(0)},
        ),
        "dense_block": (
            lambda: m.DenseBlock(2, 4),
            {
                "num_convs": lambda: m.DenseBlock(0, 4),
                "num_channels": lambda: m.DenseBlock(2, -1),
            },
        ),
        "transition_block": (
            lambda: m.TransitionBlock(4),
            {"num_channels": lambda: m.TransitionBlock(0)},
        ),
    }[kind]
    facts = layer_contract(
        make, [x], symbolic=[x.shape[1:]], call_kwargs={"training": False}
    )
    facts["errors"] = value_errors(bad)
    return facts


@lesson.probe
def run_table(m):
    return layer_table(m.densenet(), DENSENET_INPUT)


@lesson.probe
def run_training(m, x, y, steps):
    model = m.densenet(
        num_classes=4, num_channels=8, growth_rate=4, arch=(2, 2)
    )
    return train_steps(model, x, y, steps)


# ------------------------------------------------------------------ checks
MODES = ["inference", "training"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "channels", [5, 3], ids=["5_channels", "as_many_as_the_input"]
)
def test_conv_block_matches_reference(rng, channels, mode):
    x = rng.standard_normal(X_SHAPE).astype("float32")
    weights = block_weights(3, channels, 3, rng)
    training = mode == "training"
    out, used = run_block("conv_block", (channels,), x, weights, training)
    expect_reference(
        out,
        lambda w, mistake=None: ref_conv_block(x, w, training, mistake),
        used,
        say(
            "cnn_judge.on_mode",
            call=f"ConvBlock({channels})",
            shape=X_SHAPE,
            training=training,
        ),
        mistakes=(POST_ACTIVATION,),
        hint=say("l04.conv_block_hint"),
    )


DENSE_CASES = {
    # two ConvBlocks, 3 + 2 * 5 = 13 channels out
    "two_convs": (2, 5),
    # one ConvBlock as wide as the input: adding would run (and show)
    "one_conv_as_wide_as_the_input": (1, 3),
}


@pytest.mark.points(2)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(DENSE_CASES))
def test_dense_block_matches_reference(rng, case, mode):
    num_convs, growth = DENSE_CASES[case]
    x = rng.standard_normal(X_SHAPE).astype("float32")
    weights = [
        block_weights(3 + i * growth, growth, 3, rng) for i in range(num_convs)
    ]
    training = mode == "training"
    out, used = run_block(
        "dense_block", (num_convs, growth), x, weights, training
    )
    out_channels = 3 + num_convs * growth
    expect_reference(
        out,
        lambda ws, mistake=None: ref_dense_block(x, ws, training, mistake),
        used,
        say(
            "cnn_judge.on_mode",
            call=f"DenseBlock({num_convs}, {growth})",
            shape=X_SHAPE,
            training=training,
        ),
        mistakes=(ADDS, CONCAT_AXIS, POST_ACTIVATION),
        hint=say("l04.dense_block_hint", channels=out_channels),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("mode", MODES)
def test_transition_block_matches_reference(rng, mode):
    x = rng.standard_normal((2, 6, 8, 5)).astype("float32")
    weights = block_weights(5, 4, 1, rng)
    training = mode == "training"
    out, used = run_block("transition_block", (4,), x, weights, training)
    expect_reference(
        out,
        lambda w, mistake=None: ref_transition(x, w, training, mistake),
        used,
        say(
            "cnn_judge.on_mode",
            call="TransitionBlock(4)",
            shape=x.shape,
            training=training,
        ),
        mistakes=(NO_POOL,),
        hint=say("l04.transition_hint"),
    )


def test_brief_shapes(rng):
    """DenseBlock(2, 10) on (4, 8, 8, 3) gives (4, 8, 8, 23) (3 + 2 * 10);
    TransitionBlock(10) then gives (4, 4, 4, 10)."""
    x = rng.standard_normal((4, 8, 8, 3))
    dense, transition = run_brief_shapes(x.astype("float32"))
    expect_shape(
        dense,
        (4, 8, 8, 23),
        say("cnn_judge.on", call="DenseBlock(2, 10)", shape=x.shape),
    )
    expect_shape(transition, (4, 4, 4, 10), say("l04.brief_transition"))


@pytest.mark.points(2)
def test_dense_block_gradient_matches_centred_differences(rng):
    x = rng.standard_normal((1, 3, 2, 2))
    weights = [block_weights(2 + 2 * i, 2, 3, rng) for i in range(2)]
    probe_weights = rng.standard_normal((1, 3, 2, 6))
    expect_gradient(
        run_gradient(x, weights, probe_weights),
        ref_dense_block_gradient(x, weights, probe_weights),
        say("cnn_judge.gradient", call="DenseBlock(2, 2)", shape=x.shape),
        tol=GRAD,
    )


def contract_expected(kind, x, facts, name):
    """The judge's output of the contract's block (training=False) on the
    weights it was built with: its sublayers' trainable weights, and the
    batch norms' moving statistics as Keras starts them (mean 0, variance
    1; an inference call leaves them there)."""
    blocks = ("conv_block_0", "conv_block_1")
    subs = list(blocks) if kind == "dense_block" else [""]
    layout = {}
    for sub in subs:
        prefix = f"{sub}/" if sub else ""
        layout[f"{prefix}bn"] = ("gamma", "beta")
        layout[f"{prefix}conv"] = ("kernel", "bias")
    named = contract_sublayer_weights(facts, name, layout)
    ws = []
    for sub in subs:
        prefix = f"{sub}/" if sub else ""
        gamma, beta = named[f"{prefix}bn"]
        ws.append(
            {
                "bn": [gamma, beta, np.zeros_like(gamma), np.ones_like(gamma)],
                "conv": named[f"{prefix}conv"],
            }
        )
    if kind == "conv_block":
        return ref_conv_block(x, ws[0], False)
    if kind == "dense_block":
        return ref_dense_block(x, ws, False)
    return ref_transition(x, ws[0], False)


CONTRACT = {
    "conv_block": ("ConvBlock(4)", (2, 6, 5, 4), 4),
    "dense_block": ("DenseBlock(2, 4)", (2, 6, 5, 11), 8),
    "transition_block": ("TransitionBlock(4)", (2, 3, 2, 4), 4),
}


@pytest.mark.parametrize("kind", list(CONTRACT))
def test_keras_layer_contract(rng, kind):
    x = rng.standard_normal(X_SHAPE).astype("float32")
    facts = run_contract(kind, x)
    name, out_shape, trainable = CONTRACT[kind]
    expect_layer_contract(
        facts,
        name,
        output_shape=out_shape,
        symbolic_shape=(None, *out_shape[1:]),
        trainable=trainable,
        expected=contract_expected(kind, x, facts, name),
    )
    expect_value_errors(facts["errors"])


@pytest.mark.points(2)
def test_densenet_layer_table():
    """Each layer's output shape on (1, 96, 96, 1)."""
    expect_network_table(
        memo(run_table, lesson.module),
        "densenet()",
        DENSENET_INPUT,
        DENSENET_TABLE,
        diagnoses={
            KEEPS_CHANNELS: simulate(
                densenet_spec(mistake=KEEPS_CHANNELS), DENSENET_INPUT
            )[0]
        },
    )


def test_densenet_stem_matches_reference(rng):
    """The stem's values, not only its shape: a pooling window of 2 or 4
    with stride 2 gives the table's shapes too."""
    spec = densenet_spec(channels=STEM_CHANNELS)[:1]
    x = rng.standard_normal(STEM_INPUT).astype("float32")
    weights = init_weights(spec, x.shape, rng)
    shape = forward(spec, x, weights).shape[1:]
    out, used = run_stem(x, weights, shape)
    expect_reference(
        out,
        lambda w, mistake=None: forward(spec, x, w),
        used,
        say("l04.stem"),
        hint=say("cnn_judge.stem_bn_hint"),
    )


def test_densenet_parameter_count():
    facts = memo(run_table, lesson.module)
    _, trainable, moving = simulate(densenet_spec(), DENSENET_INPUT)
    _, wrong, _ = simulate(
        densenet_spec(mistake=KEEPS_CHANNELS), DENSENET_INPUT
    )
    expect_count(
        facts["trainable"],
        trainable,
        say("cnn_judge.trainable", call="densenet()"),
        diagnoses={KEEPS_CHANNELS: wrong},
        hint=say("l04.params_hint"),
    )
    expect_count(
        facts["non_trainable"],
        moving,
        say("cnn_judge.non_trainable_bn", call="densenet()"),
    )


def test_narrow_densenet_trains():
    """Smoke: densenet(num_channels=8, growth_rate=4, arch=(2, 2)) with Adam
    on 16 generated 16x16 images; the loss falls by 10% within 4 steps."""
    x, y = toy_images(16, 16, 16, standardised=True)
    expect_loss_falls(
        run_training(x, y, 4), say("cnn_judge.narrow", net="DenseNet")
    )
