"""Grader for lesson 03: the Inception block and GoogLeNet, the residual
block and ResNet-18.

* Blocks against a float64 NumPy reference with the grader's weights
  transferred into the named sublayers (nonzero biases; batch-norm moving
  statistics away from 0 and 1). Batch norm is checked both ways, stated in
  each check's name: `inference` (training=False, the moving statistics the
  grader set) and `training` (training=True, the batch's own mean and
  biased variance over B, H, W).
* Networks: the seed's layer tables, GoogLeNet on (1, 96, 96, 1) and
  ResNet-18 on (1, 224, 224, 1) (shape inference, no weights initialised),
  and parameter counts against the closed form; each network's b1 by value,
  with the grader's weights, against the float64 forward pass.
* The residual block's tape gradient against centred differences of the
  float64 reference (the judge's own, at the same weights).
* Smoke: a narrow ResNet-18 and a small net around one Inception block train
  on generated images.

Inputs give every axis its own size (B=2, H=7, W=5, C=6 for Inception;
B=2, H=6, W=5, C=3 for Residual), except the brief's shape checks, which
use the seed-notes' (4, 6, 6, 3).
"""

from functools import partial

import numpy as np
import pytest

from graders.lib.cnn_judge import expect_loss_falls
from graders.lib.cnn_judge import expect_network_table
from graders.lib.cnn_probes import first_layer_output
from graders.lib.cnn_probes import layer_table
from graders.lib.cnn_probes import train_steps
from graders.lib.cnn_probes import transfer_named
from graders.lib.cnn_references import BN_ROLES
from graders.lib.cnn_references import batch_norm
from graders.lib.cnn_references import bn_params
from graders.lib.cnn_references import conv2d
from graders.lib.cnn_references import conv_params
from graders.lib.cnn_references import forward
from graders.lib.cnn_references import init_weights
from graders.lib.cnn_references import max_pool
from graders.lib.cnn_references import random_weight
from graders.lib.cnn_references import relu
from graders.lib.cnn_references import simulate
from graders.lib.contract import centred_differences
from graders.lib.contract import contract_sublayer_weights
from graders.lib.contract import expect_computes_in
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
from graders.lib.probes import layers_off_dtype
from graders.lib.probes import tape_gradient
from graders.lib.probes import value_errors
from graders.lib.tolerances import GRAD
from m2t.grading.probe import Lesson

lesson = Lesson("l03_inception_resnet")
GOOGLENET_INPUT = (1, 96, 96, 1)
RESNET_INPUT = (1, 224, 224, 1)
STEM_INPUT = (2, 13, 10, 1)
"""(B, H, W, 1): b1 halves H and W twice, (2, 13, 10) -> (2, 4, 3)."""
STEM_WIDTHS = (4, 8, 8, 8)
"""resnet18(widths=STEM_WIDTHS): a narrow b1 for its values."""

# ------------------------------------------------- the seed's tables (NHWC)
# seeds/004, channels-last; ResNet's AdaptiveAvgPool2d + Flatten is one
# GlobalAveragePooling2D here, and Linear is Dense.
GOOGLENET_TABLE = [
    ("Sequential", (1, 24, 24, 64)),
    ("Sequential", (1, 12, 12, 192)),
    ("Sequential", (1, 6, 6, 480)),
    ("Sequential", (1, 3, 3, 832)),
    ("Sequential", (1, 1024)),
    ("Dense", (1, 10)),
]
RESNET18_TABLE = [
    ("Sequential", (1, 56, 56, 64)),
    ("Sequential", (1, 56, 56, 64)),
    ("Sequential", (1, 28, 28, 128)),
    ("Sequential", (1, 14, 14, 256)),
    ("Sequential", (1, 7, 7, 512)),
    ("GlobalAveragePooling2D", (1, 512)),
    ("Dense", (1, 10)),
]

# ---------------------------------------------------------------- mistakes
INCEPTION_ORDER = Mistake(
    "inception_paths_out_of_order",
    "the paths are concatenated out of order: the channels are p1, p2, p3, "
    "p4 (1x1, 3x3, 5x5, pool), in that order.",
)
INCEPTION_AXIS = Mistake(
    "inception_concat_channels_first",
    "the paths are concatenated on axis 1, PyTorch's channel axis; images "
    "here are (B, H, W, C): concatenate on axis -1.",
)
INCEPTION_NO_POOL = Mistake(
    "inception_pool_path_skips_pool",
    "path 4 skips its 3x3 max-pooling: it is p4_2(p4_1(inputs)).",
)
NO_SHORTCUT = Mistake(
    "residual_without_shortcut",
    "the block does not add its input back: out = relu(Y + X) (or "
    "relu(Y + conv3(X)) with the 1x1 convolution).",
)
RELU_BEFORE_ADD = Mistake(
    "residual_relu_before_add",
    "the last relu comes before the shortcut is added: out = relu(Y + X), "
    "not relu(Y) + X (the output must be >= 0 and the block's layers start "
    "from the identity).",
)
SHORTCUT_SKIPS_1X1 = Mistake(
    "shortcut_ignores_conv3",
    "with use_1x1conv the shortcut must go through conv3 (1x1, with the "
    "strides): X' = conv3(X), so its channels and size match Y.",
)
FIRST_STAGE_DOWNSAMPLES = Mistake(
    "resnet_first_stage_downsamples",
    "the first ResNet stage halves the size again: it follows b1's "
    "max-pooling, so its first block keeps size and channels "
    "(resnet_block(64, 2, first_block=True)).",
)
FLOAT32_ADD = Mistake(
    "float32_add_layer",
    "your layer computes in float32 inside a float64 model: "
    "keras.layers.add([Y, X']) called in call makes a new Add layer with "
    "the default float32 policy every time (its float32 sum is right, but "
    "a float64 Residual must compute in float64); write Y + X' (or "
    "keras.ops.add), which follows the inputs' dtype.",
)
MISTAKES = (
    INCEPTION_ORDER,
    INCEPTION_AXIS,
    INCEPTION_NO_POOL,
    NO_SHORTCUT,
    RELU_BEFORE_ADD,
    SHORTCUT_SKIPS_1X1,
    FIRST_STAGE_DOWNSAMPLES,
    FLOAT32_ADD,
)
INCEPTION_MISTAKES = (INCEPTION_ORDER, INCEPTION_AXIS, INCEPTION_NO_POOL)
RESIDUAL_MISTAKES = (NO_SHORTCUT, RELU_BEFORE_ADD, SHORTCUT_SKIPS_1X1)


# --------------------------------------------------- float64 references
@reference
def ref_inception(x, w, mistake=None):
    """w: {"p1_1": [kernel, bias], ...} as the layer's sublayers."""
    p1 = relu(conv2d(x, *w["p1_1"]))
    p2 = relu(conv2d(relu(conv2d(x, *w["p2_1"])), *w["p2_2"], 1, "same"))
    p3 = relu(conv2d(relu(conv2d(x, *w["p3_1"])), *w["p3_2"], 1, "same"))
    pooled = x if mistake is INCEPTION_NO_POOL else max_pool(x, 3, 1, "same")
    p4 = relu(conv2d(pooled, *w["p4_2"]))
    paths = [p2, p1, p3, p4] if mistake is INCEPTION_ORDER else [p1, p2, p3, p4]
    return np.concatenate(paths, axis=1 if mistake is INCEPTION_AXIS else -1)


@reference
def ref_residual(x, w, strides, training, mistake=None):
    """w: {"conv1": [kernel, bias], "bn1": [gamma, beta, mean, var], ...}."""
    Y = conv2d(x, *w["conv1"], strides, "same")
    Y = relu(batch_norm(Y, *w["bn1"], training=training))
    Y = batch_norm(
        conv2d(Y, *w["conv2"], 1, "same"), *w["bn2"], training=training
    )
    if "conv3" in w and mistake is not SHORTCUT_SKIPS_1X1:
        shortcut = conv2d(x, *w["conv3"], strides, "valid")
    else:
        shortcut = np.asarray(x, np.float64)
    if mistake is NO_SHORTCUT:
        return relu(Y)
    if mistake is RELU_BEFORE_ADD:
        return relu(Y) + shortcut
    return relu(Y + shortcut)


@reference
def ref_residual_gradient(x, w, strides, probe_weights):
    """d sum(out * probe_weights) / d(inputs) of the float64 block in
    inference (training=False): centred differences, of x's shape."""
    return centred_differences(
        lambda v: np.sum(ref_residual(v, w, strides, False) * probe_weights),
        x,
    )


def inception_weights(c_in, c1, c2, c3, c4, rng):
    def conv(k, cin, cout):
        return [
            random_weight((k, k, cin, cout), "kernel", rng),
            random_weight((cout,), "bias", rng),
        ]

    return {
        "p1_1": conv(1, c_in, c1),
        "p2_1": conv(1, c_in, c2[0]),
        "p2_2": conv(3, c2[0], c2[1]),
        "p3_1": conv(1, c_in, c3[0]),
        "p3_2": conv(5, c3[0], c3[1]),
        "p4_2": conv(1, c_in, c4),
    }


def residual_weights(c_in, channels, use_1x1conv, rng):
    def conv(k, cin, cout):
        return [
            random_weight((k, k, cin, cout), "kernel", rng),
            random_weight((cout,), "bias", rng),
        ]

    def bn(c):
        return [random_weight((c,), role, rng) for role in BN_ROLES]

    weights = {
        "conv1": conv(3, c_in, channels),
        "conv2": conv(3, channels, channels),
        "bn1": bn(channels),
        "bn2": bn(channels),
    }
    if use_1x1conv:
        weights["conv3"] = conv(1, c_in, channels)
    return weights


# ------------------------------------------ architectures in closed form
def inception_block(c1, c2, c3, c4):
    def fn(shape):
        c_in = shape[-1]
        params = (
            conv_params(1, c_in, c1)
            + conv_params(1, c_in, c2[0])
            + conv_params(3, c2[0], c2[1])
            + conv_params(1, c_in, c3[0])
            + conv_params(5, c3[0], c3[1])
            + conv_params(1, c_in, c4)
        )
        return (*shape[:-1], c1 + c2[1] + c3[1] + c4), params, 0

    return ("block", "Inception", fn)


def residual_block(channels, use_1x1conv=False, strides=1):
    def fn(shape):
        c_in = shape[-1]
        trainable = conv_params(3, c_in, channels) + conv_params(
            3, channels, channels
        )
        if use_1x1conv:
            trainable += conv_params(1, c_in, channels)
        bn_trainable, bn_moving = bn_params(channels)
        h, w = -(-shape[1] // strides), -(-shape[2] // strides)
        return (
            (shape[0], h, w, channels),
            trainable + 2 * bn_trainable,
            2 * bn_moving,
        )

    return ("block", "Residual", fn)


def googlenet_spec(classes=10):
    pool = ("pool", "max", 3, 2, "same")
    return [
        ("seq", [("conv", 64, 7, 2, "same", "relu"), pool]),
        (
            "seq",
            [
                ("conv", 64, 1, 1, "valid", "relu"),
                ("conv", 192, 3, 1, "same", "relu"),
                pool,
            ],
        ),
        (
            "seq",
            [
                inception_block(64, (96, 128), (16, 32), 32),
                inception_block(128, (128, 192), (32, 96), 64),
                pool,
            ],
        ),
        (
            "seq",
            [
                inception_block(192, (96, 208), (16, 48), 64),
                inception_block(160, (112, 224), (24, 64), 64),
                inception_block(128, (128, 256), (24, 64), 64),
                inception_block(112, (144, 288), (32, 64), 64),
                inception_block(256, (160, 320), (32, 128), 128),
                pool,
            ],
        ),
        (
            "seq",
            [
                inception_block(256, (160, 320), (32, 128), 128),
                inception_block(384, (192, 384), (48, 128), 128),
                ("gap",),
            ],
        ),
        ("dense", classes, None),
    ]


def resnet18_spec(widths=(64, 128, 256, 512), classes=10, mistake=None):
    def stage(channels, first_block):
        if first_block and mistake is not FIRST_STAGE_DOWNSAMPLES:
            return ("seq", [residual_block(channels)] * 2)
        return (
            "seq",
            [residual_block(channels, True, 2), residual_block(channels)],
        )

    return [
        (
            "seq",
            [
                ("conv", widths[0], 7, 2, "same", None),
                ("bn",),
                ("relu",),
                ("pool", "max", 3, 2, "same"),
            ],
        ),
        stage(widths[0], True),
        stage(widths[1], False),
        stage(widths[2], False),
        stage(widths[3], False),
        ("gap",),
        ("dense", classes, None),
    ]


# ------------------------------------------------------------------ probes
@lesson.probe
def run_inception(m, args, x, weights):
    block = m.Inception(*args)
    block(x)  # build
    used = transfer_named(block, weights)
    return block(x), used


@lesson.probe
def run_residual(m, args, x, weights, training):
    block = m.Residual(*args)
    block(x, training=False)  # build
    used = transfer_named(block, weights)
    return block(x, training=training), used


@lesson.probe
def run_residual_shapes(m, x):
    return (
        tuple(m.Residual(3)(x).shape),
        tuple(m.Residual(6, use_1x1conv=True, strides=2)(x).shape),
    )


@lesson.probe
def run_residual_dtypes(m, x):
    block = m.Residual(2, dtype="float64")
    return layers_off_dtype(partial(block, training=False), x)


@lesson.probe
def run_residual_gradient(m, args, x, weights, probe_weights):
    """The tape gradient of sum(out * probe_weights) by the inputs, of
    Residual(*args, dtype="float64") in inference with the judge's
    weights."""
    import keras

    block = m.Residual(*args, dtype="float64")
    block(x, training=False)  # build
    transfer_named(block, weights)
    return tape_gradient(
        lambda v: keras.ops.sum(block(v, training=False) * probe_weights), x
    )


@lesson.probe
def run_stem(m, kind, x, weights, shape):
    """b1 of googlenet() or resnet18(widths=STEM_WIDTHS) on x in
    inference with the judge's weights in its weights in order (its
    output has the judge's `shape`, see cnn_probes.first_layer_output);
    returns (output, the weights it ended up with)."""
    if kind == "googlenet":
        model = m.googlenet()
    else:
        model = m.resnet18(widths=STEM_WIDTHS)
    return first_layer_output(model, x, weights, shape)


@lesson.probe
def run_contract(m, kind, x):
    if kind == "inception":
        facts = layer_contract(
            lambda: m.Inception(2, (3, 4), (2, 3), 5),
            [x],
            symbolic=[x.shape[1:]],
        )
        bad = {
            "c1": lambda: m.Inception(0, (3, 4), (2, 3), 5),
            "c2": lambda: m.Inception(2, (3,), (2, 3), 5),
        }
    else:
        facts = layer_contract(
            lambda: m.Residual(4, use_1x1conv=True, strides=2),
            [x],
            symbolic=[x.shape[1:]],
            call_kwargs={"training": False},
        )
        bad = {
            "num_channels": lambda: m.Residual(0),
            "strides": lambda: m.Residual(3, strides=0),
        }
    facts["errors"] = value_errors(bad)
    return facts


@lesson.probe
def run_table(m, kind):
    keep = ("Inception", "Residual")
    if kind == "googlenet":
        return layer_table(m.googlenet(), GOOGLENET_INPUT, keep)
    return layer_table(m.resnet18(), RESNET_INPUT, keep)


@lesson.probe
def run_training(m, kind, x, y, steps):
    import keras

    if kind == "resnet18":
        model = m.resnet18(num_classes=4, widths=(4, 8, 8, 8))
    else:
        layers = keras.layers
        model = keras.Sequential(
            [
                layers.Conv2D(8, 3, strides=2, padding="same"),
                m.Inception(4, (4, 8), (2, 4), 4),
                layers.Flatten(),  # keeps where the square is
                layers.Dense(4),
            ]
        )
    return train_steps(model, x, y, steps)


# ------------------------------------------------------------------ checks
INCEPTION_CASES = {
    # distinct path widths: an order mistake shows in the channels
    "distinct_widths": ((2, (3, 4), (2, 3), 5), (2, 7, 5, 6)),
    # equal path widths: a concatenation on the wrong axis runs, and shows
    "equal_widths": ((3, (2, 3), (2, 3), 3), (2, 7, 5, 4)),
}


@pytest.mark.points(2)
@pytest.mark.parametrize("case", list(INCEPTION_CASES))
def test_inception_matches_reference(rng, case):
    args, shape = INCEPTION_CASES[case]
    x = rng.standard_normal(shape).astype("float32")
    weights = inception_weights(shape[-1], *args, rng)
    out, used = run_inception(args, x, weights)
    channels = args[0] + args[1][1] + args[2][1] + args[3]
    expect_reference(
        out,
        lambda w, mistake=None: ref_inception(x, w, mistake),
        used,
        say("cnn_judge.on", call=f"Inception{args}", shape=shape),
        mistakes=INCEPTION_MISTAKES,
        hint=say("l03.inception_hint", channels=channels),
    )


@pytest.mark.points(2)
def test_googlenet_seed_layer_table():
    """Each stage's output shape on (1, 96, 96, 1), as the seed prints;
    nested otherwise (d2l's b5 ending in Flatten), leaf by leaf."""
    expect_network_table(
        memo(run_table, lesson.module, "googlenet"),
        "googlenet()",
        GOOGLENET_INPUT,
        GOOGLENET_TABLE,
        spec=googlenet_spec(),
        hint=say("l03.googlenet_table_hint"),
    )


def test_googlenet_parameter_count():
    facts = memo(run_table, lesson.module, "googlenet")
    _, expected, _ = simulate(googlenet_spec(), GOOGLENET_INPUT)
    expect_count(
        facts["trainable"],
        expected,
        say("cnn_judge.trainable", call="googlenet()"),
        hint=say("l03.googlenet_params_hint"),
    )


def test_residual_output_shapes(rng):
    """The brief's shapes: Residual(3) keeps (4, 6, 6, 3);
    Residual(6, use_1x1conv=True, strides=2) gives (4, 3, 3, 6)."""
    x = rng.standard_normal((4, 6, 6, 3))
    same, halved = run_residual_shapes(x.astype("float32"))
    expect_shape(
        same,
        (4, 6, 6, 3),
        say("cnn_judge.on", call="Residual(3)", shape=(4, 6, 6, 3)),
    )
    expect_shape(
        halved,
        (4, 3, 3, 6),
        say(
            "cnn_judge.on",
            call="Residual(6, use_1x1conv=True, strides=2)",
            shape=(4, 6, 6, 3),
        ),
    )


RESIDUAL_CASES = {
    "identity": (3, False, 1),
    "conv3_same_size": (3, True, 1),
    "conv3_strided": (4, True, 2),
}


@pytest.mark.points(2)
@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", list(RESIDUAL_CASES))
def test_residual_matches_reference(rng, case, mode):
    """Batch norm: `inference` uses the moving statistics the grader set;
    `training` the batch's mean and biased variance over (B, H, W)."""
    args = RESIDUAL_CASES[case]
    x = rng.standard_normal((2, 6, 5, 3)).astype("float32")
    weights = residual_weights(3, args[0], args[1], rng)
    training = mode == "training"
    out, used = run_residual(args, x, weights, training)
    expect_reference(
        out,
        lambda w, mistake=None: ref_residual(x, w, args[2], training, mistake),
        used,
        say(
            "cnn_judge.on_mode",
            call=f"Residual{args}",
            shape=(2, 6, 5, 3),
            training=training,
        ),
        mistakes=RESIDUAL_MISTAKES,
        hint=say("l03.residual_hint"),
    )


def test_residual_computes_in_float64(rng):
    """Residual(2, dtype='float64') on float64 inputs: every layer it calls
    computes in float64 (the gradient check below needs it)."""
    expect_computes_in(
        run_residual_dtypes(rng.standard_normal((1, 3, 2, 2))),
        "float64",
        "Residual(2, dtype='float64')",
        diagnoses={FLOAT32_ADD: "Add"},
    )


@pytest.mark.points(2)
def test_residual_gradient_matches_centred_differences(rng):
    x = rng.standard_normal((1, 3, 2, 2))
    weights = residual_weights(2, 2, False, rng)
    probe_weights = rng.standard_normal((1, 3, 2, 2))
    expect_gradient(
        run_residual_gradient((2,), x, weights, probe_weights),
        ref_residual_gradient(x, weights, 1, probe_weights),
        say("cnn_judge.gradient", call="Residual(2)", shape=x.shape),
        tol=GRAD,
    )


def contract_expected(kind, x, facts, name):
    """The judge's output of the contract's block on the weights it was
    built with: its named sublayers' trainable weights, and the batch
    norms' moving statistics as Keras starts them (mean 0, variance 1; the
    contract's calls, training=False, leave them there)."""
    conv = ("kernel", "bias")
    if kind == "inception":
        subs = ("p1_1", "p2_1", "p2_2", "p3_1", "p3_2", "p4_2")
        return ref_inception(
            x, contract_sublayer_weights(facts, name, dict.fromkeys(subs, conv))
        )
    layout = {"conv1": conv, "conv2": conv, "conv3": conv}
    layout |= {"bn1": ("gamma", "beta"), "bn2": ("gamma", "beta")}
    w = contract_sublayer_weights(facts, name, layout)
    for bn in ("bn1", "bn2"):
        w[bn] += [np.zeros_like(w[bn][0]), np.ones_like(w[bn][0])]
    return ref_residual(x, w, 2, False)


@pytest.mark.parametrize("kind", ["inception", "residual"])
def test_keras_layer_contract(rng, kind):
    shape = (2, 7, 5, 6) if kind == "inception" else (2, 6, 5, 3)
    x = rng.standard_normal(shape).astype("float32")
    facts = run_contract(kind, x)
    name, out_shape, trainable = {
        "inception": ("Inception(2, (3, 4), (2, 3), 5)", (2, 7, 5, 14), 12),
        "residual": (
            "Residual(4, use_1x1conv=True, strides=2)",
            (2, 3, 3, 4),
            10,
        ),
    }[kind]
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
def test_resnet18_seed_layer_table():
    """Each stage's output shape on (1, 224, 224, 1), as the seed prints;
    nested otherwise (d2l-zh's stages as a Layer, d2l's Sequential head),
    leaf by leaf."""
    expect_network_table(
        memo(run_table, lesson.module, "resnet18"),
        "resnet18()",
        RESNET_INPUT,
        RESNET18_TABLE,
        spec=resnet18_spec(),
        mistake_specs={
            FIRST_STAGE_DOWNSAMPLES: resnet18_spec(
                mistake=FIRST_STAGE_DOWNSAMPLES
            )
        },
    )


STEMS = {
    "googlenet": (
        googlenet_spec()[:1],
        "googlenet()",
        "l03.stem_googlenet_hint",
    ),
    "resnet18": (
        resnet18_spec(STEM_WIDTHS)[:1],
        f"resnet18(widths={STEM_WIDTHS})",
        "cnn_judge.stem_bn_hint",
    ),
}


@pytest.mark.parametrize("kind", list(STEMS))
def test_stem_matches_reference(rng, kind):
    """b1's values, not only its shape: a pooling window of 2 or 4 with
    stride 2 gives the tables' shapes too."""
    spec, call, hint = STEMS[kind]
    x = rng.standard_normal(STEM_INPUT).astype("float32")
    weights = init_weights(spec, x.shape, rng)
    shape = forward(spec, x, weights).shape[1:]
    out, used = run_stem(kind, x, weights, shape)
    expect_reference(
        out,
        lambda w, mistake=None: forward(spec, x, w),
        used,
        say("l03.stem", call=call, shape=STEM_INPUT),
        hint=say(hint),
    )


def test_resnet18_parameter_count():
    facts = memo(run_table, lesson.module, "resnet18")
    _, trainable, moving = simulate(resnet18_spec(), RESNET_INPUT)
    _, wrong, _ = simulate(
        resnet18_spec(mistake=FIRST_STAGE_DOWNSAMPLES), RESNET_INPUT
    )
    expect_count(
        facts["trainable"],
        trainable,
        say("cnn_judge.trainable", call="resnet18()"),
        diagnoses={FIRST_STAGE_DOWNSAMPLES: wrong},
        hint=say("l03.resnet_params_hint"),
    )
    expect_count(
        facts["non_trainable"],
        moving,
        say("cnn_judge.non_trainable_bn", call="resnet18()"),
    )


@pytest.mark.parametrize("kind", ["inception", "resnet18"])
def test_trains(kind):
    """Smoke: Adam on 16 generated 16x16 images; the loss falls by 10%
    within 4 steps (a narrow ResNet-18; a small net around one Inception
    block)."""
    x, y = toy_images(16, 16, 16, standardised=True)
    what = {
        "inception": say("l03.inception_net"),
        "resnet18": say("cnn_judge.narrow", net="ResNet-18"),
    }[kind]
    expect_loss_falls(run_training(kind, x, y, 4), what)
