"""Grader for lesson 02: AlexNet, VGG and NiN.

What it checks, per network:
* the seed's layer table: each top-level layer's output shape on a
  (1, 224, 224, 1) batch, channels-last (shape inference only, no weights
  initialised); a fused `activation="relu"` prints as its own ReLU row;
* the parameter count against the closed form (k*k*C_in*C_out + C_out per
  convolution, D_in*D_out + D_out per dense layer);
* the numbers: a narrow version (the same function with small widths) on
  a (2, 99, 67, 1) batch, the grader's weights transferred in, against a
  float64 NumPy forward pass (dropout off: inference);
* the blocks `vgg_block` and `nin_block` alone against NumPy;
* a smoke check: a narrow network trains on a small generated image set.

Every axis of the inputs has its own size (B=2, H=99, W=67 or B=2, H=8,
W=6, C=3), so a height/width mix-up shows.
"""

import pytest

from graders.lib.cnn_judge import expect_loss_falls
from graders.lib.cnn_judge import expect_network_table
from graders.lib.cnn_probes import train_steps
from graders.lib.cnn_probes import transfer
from graders.lib.cnn_references import forward
from graders.lib.cnn_references import init_weights
from graders.lib.cnn_references import simulate
from graders.lib.data import toy_images
from graders.lib.judge import Mistake
from graders.lib.judge import expect
from graders.lib.judge import expect_count
from graders.lib.judge import expect_reference
from graders.lib.judge import memo
from graders.lib.messages import say
from m2t.grading.probe import Lesson

lesson = Lesson("l02_classic_cnns")
SEED_INPUT = (1, 224, 224, 1)
NARROW_INPUT = (2, 99, 67, 1)
VGG11 = ((1, 64), (1, 128), (2, 256), (2, 512), (2, 512))

# ------------------------------------------------- the seed's tables (NHWC)
# seeds/004: PyTorch's (1, 96, 54, 54) is (1, 54, 54, 96) here; Linear is
# Dense, MaxPool2d is MaxPooling2D; NiN's AdaptiveAvgPool2d + Flatten is one
# GlobalAveragePooling2D.
ALEXNET_TABLE = [
    ("Conv2D", (1, 54, 54, 96)),
    ("ReLU", (1, 54, 54, 96)),
    ("MaxPooling2D", (1, 26, 26, 96)),
    ("Conv2D", (1, 26, 26, 256)),
    ("ReLU", (1, 26, 26, 256)),
    ("MaxPooling2D", (1, 12, 12, 256)),
    ("Conv2D", (1, 12, 12, 384)),
    ("ReLU", (1, 12, 12, 384)),
    ("Conv2D", (1, 12, 12, 384)),
    ("ReLU", (1, 12, 12, 384)),
    ("Conv2D", (1, 12, 12, 256)),
    ("ReLU", (1, 12, 12, 256)),
    ("MaxPooling2D", (1, 5, 5, 256)),
    ("Flatten", (1, 6400)),
    ("Dense", (1, 4096)),
    ("ReLU", (1, 4096)),
    ("Dropout", (1, 4096)),
    ("Dense", (1, 4096)),
    ("ReLU", (1, 4096)),
    ("Dropout", (1, 4096)),
    ("Dense", (1, 10)),
]
VGG_TABLE = [
    ("Sequential", (1, 112, 112, 64)),
    ("Sequential", (1, 56, 56, 128)),
    ("Sequential", (1, 28, 28, 256)),
    ("Sequential", (1, 14, 14, 512)),
    ("Sequential", (1, 7, 7, 512)),
    ("Flatten", (1, 25088)),
    ("Dense", (1, 4096)),
    ("ReLU", (1, 4096)),
    ("Dropout", (1, 4096)),
    ("Dense", (1, 4096)),
    ("ReLU", (1, 4096)),
    ("Dropout", (1, 4096)),
    ("Dense", (1, 10)),
]
NIN_TABLE = [
    ("Sequential", (1, 54, 54, 96)),
    ("MaxPooling2D", (1, 26, 26, 96)),
    ("Sequential", (1, 26, 26, 256)),
    ("MaxPooling2D", (1, 12, 12, 256)),
    ("Sequential", (1, 12, 12, 384)),
    ("MaxPooling2D", (1, 5, 5, 384)),
    ("Dropout", (1, 5, 5, 384)),
    ("Sequential", (1, 5, 5, 10)),
    ("GlobalAveragePooling2D", (1, 10)),
]

# ---------------------------------------------------------------- mistakes
ALEXNET_NO_RELU = Mistake(
    "alexnet_conv_without_relu",
    "a convolution has no ReLU (activation='relu'): without the "
    "nonlinearity, consecutive layers collapse into one linear map.",
)
ALEXNET_SAME_FIRST = Mistake(
    "alexnet_first_conv_same",
    "the first 11x11 convolution with stride 4 uses padding 'same' "
    "(224 -> 56); AlexNet's uses 'valid' (224 -> floor((224 - 11) / 4) + 1 "
    "= 54).",
)
VGG_POOL_PER_CONV = Mistake(
    "vgg_pool_per_conv",
    "the max-pooling follows every convolution of a VGG block: a block is "
    "num_convs convolutions and then ONE pooling that halves H and W.",
)
NIN_NO_1X1 = Mistake(
    "nin_block_without_1x1",
    "the NiN block lacks its two 1x1 convolutions (each num_channels "
    "filters, ReLU): they are the per-pixel MLP that gives NiN its name.",
)
NIN_FLATTEN = Mistake(
    "nin_flatten_instead_of_gap",
    "NiN ends in Flatten instead of GlobalAveragePooling2D: the last block "
    "has one channel per class, and the global average of each channel is "
    "its logit.",
)
MISTAKES = (
    ALEXNET_NO_RELU,
    ALEXNET_SAME_FIRST,
    VGG_POOL_PER_CONV,
    NIN_NO_1X1,
    NIN_FLATTEN,
)


# ------------------------------------------ architectures in closed form
def alexnet_spec(
    widths=(96, 256, 384, 384, 256), hiddens=4096, classes=10, mistake=None
):
    first_padding = "same" if mistake is ALEXNET_SAME_FIRST else "valid"
    first_activation = None if mistake is ALEXNET_NO_RELU else "relu"
    return [
        ("conv", widths[0], 11, 4, first_padding, first_activation),
        ("pool", "max", 3, 2, "valid"),
        ("conv", widths[1], 5, 1, "same", "relu"),
        ("pool", "max", 3, 2, "valid"),
        ("conv", widths[2], 3, 1, "same", "relu"),
        ("conv", widths[3], 3, 1, "same", "relu"),
        ("conv", widths[4], 3, 1, "same", "relu"),
        ("pool", "max", 3, 2, "valid"),
        ("flatten",),
        ("dense", hiddens, "relu"),
        ("dropout",),
        ("dense", hiddens, "relu"),
        ("dropout",),
        ("dense", classes, None),
    ]


def vgg_block_spec(num_convs, channels, mistake=None):
    spec = []
    for _ in range(num_convs):
        spec.append(("conv", channels, 3, 1, "same", "relu"))
        if mistake is VGG_POOL_PER_CONV:
            spec.append(("pool", "max", 2, 2, "valid"))
    if mistake is not VGG_POOL_PER_CONV:
        spec.append(("pool", "max", 2, 2, "valid"))
    return spec


def vgg_spec(conv_arch=VGG11, hiddens=4096, classes=10, mistake=None):
    return [
        *(("seq", vgg_block_spec(n, c, mistake)) for n, c in conv_arch),
        ("flatten",),
        ("dense", hiddens, "relu"),
        ("dropout",),
        ("dense", hiddens, "relu"),
        ("dropout",),
        ("dense", classes, None),
    ]


def nin_block_spec(channels, k, strides, padding, mistake=None):
    spec = [("conv", channels, k, strides, padding, "relu")]
    if mistake is not NIN_NO_1X1:
        spec += [("conv", channels, 1, 1, "valid", "relu")] * 2
    return spec


def nin_spec(widths=(96, 256, 384), classes=10, mistake=None):
    return [
        ("seq", nin_block_spec(widths[0], 11, 4, "valid", mistake)),
        ("pool", "max", 3, 2, "valid"),
        ("seq", nin_block_spec(widths[1], 5, 1, "same", mistake)),
        ("pool", "max", 3, 2, "valid"),
        ("seq", nin_block_spec(widths[2], 3, 1, "same", mistake)),
        ("pool", "max", 3, 2, "valid"),
        ("dropout",),
        ("seq", nin_block_spec(classes, 3, 1, "same", mistake)),
        ("flatten",) if mistake is NIN_FLATTEN else ("gap",),
    ]


NETS = {
    "alexnet": (alexnet_spec, (ALEXNET_NO_RELU, ALEXNET_SAME_FIRST)),
    "vgg": (vgg_spec, (VGG_POOL_PER_CONV,)),
    "nin": (nin_spec, (NIN_NO_1X1, NIN_FLATTEN)),
}
SEED_TABLES = {"alexnet": ALEXNET_TABLE, "vgg": VGG_TABLE, "nin": NIN_TABLE}

# Narrow versions: the student's functions with small widths.
NARROW = {
    "alexnet": (
        {"num_classes": 5, "widths": (4, 6, 8, 10, 6), "num_hiddens": 12},
        lambda m=None: alexnet_spec((4, 6, 8, 10, 6), 12, 5, m),
    ),
    "vgg": (
        {"conv_arch": ((1, 4), (2, 6)), "num_classes": 5, "num_hiddens": 8},
        lambda m=None: vgg_spec(((1, 4), (2, 6)), 8, 5, m),
    ),
    "nin": (
        {"num_classes": 5, "widths": (4, 6, 8)},
        lambda m=None: nin_spec((4, 6, 8), 5, m),
    ),
}


# ------------------------------------------------------------------ probes
def _build(m, kind, kwargs):
    return {"alexnet": m.alexnet, "vgg": m.vgg, "nin": m.nin}[kind](**kwargs)


@lesson.probe
def run_table(m, kind):
    from graders.lib.cnn_probes import layer_table

    return layer_table(_build(m, kind, {}), SEED_INPUT)


@lesson.probe
def run_network(m, kind, kwargs, x, weights):
    model = _build(m, kind, kwargs)
    model(x[:1])  # build
    used = transfer(model, weights)
    return model(x, training=False), used


@lesson.probe
def run_block(m, kind, args, x, weights):
    block = m.vgg_block(*args) if kind == "vgg" else m.nin_block(*args)
    block(x)  # build
    used = transfer(block, weights)
    facts = {"type": type(block).__name__, "layers": len(block.layers)}
    return block(x), used, facts


@lesson.probe
def run_training(m, kind, kwargs, x, y, steps):
    return train_steps(_build(m, kind, kwargs), x, y, steps)


# ------------------------------------------------------------------ checks
@pytest.mark.points(2)
@pytest.mark.parametrize("kind", ["alexnet", "vgg", "nin"])
def test_seed_layer_table(kind):
    """Each layer's output shape on (1, 224, 224, 1), as the seed prints;
    nested otherwise (d2l's VGG head, its NiN's Reshape and Flatten), leaf
    by leaf."""
    spec, mistakes = NETS[kind]
    expect_network_table(
        memo(run_table, lesson.module, kind),
        f"{kind}()",
        SEED_INPUT,
        SEED_TABLES[kind],
        spec=spec(),
        mistake_specs={m: spec(mistake=m) for m in mistakes},
    )


@pytest.mark.parametrize("kind", ["alexnet", "vgg", "nin"])
def test_parameter_count(kind):
    """Trainable parameters against the closed form of the architecture."""
    facts = memo(run_table, lesson.module, kind)
    spec, mistakes = NETS[kind]
    _, expected, _ = simulate(spec(), SEED_INPUT)
    candidates = {}
    for mistake in mistakes:
        try:
            candidates[mistake] = simulate(spec(mistake=mistake), SEED_INPUT)[1]
        except ValueError:
            pass
    expect_count(
        facts["trainable"],
        expected,
        say("l02.trainable", call=f"{kind}()"),
        diagnoses=candidates,
        hint=say("l02.params_hint"),
    )
    expect_count(
        facts["non_trainable"],
        0,
        say("l02.non_trainable", call=f"{kind}()"),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize("kind", ["alexnet", "vgg", "nin"])
def test_narrow_network_matches_reference(rng, kind):
    kwargs, spec = NARROW[kind]
    x = rng.uniform(0, 1, NARROW_INPUT if kind != "vgg" else (2, 12, 8, 1))
    x = x.astype("float32")
    weights = init_weights(spec(), x.shape, rng)
    out, used = run_network(kind, kwargs, x, weights)
    args = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    expect_reference(
        out,
        lambda w, mistake=None: forward(spec(mistake), x, w),
        used,
        say("l02.narrow_logits", call=f"{kind}({args})", shape=x.shape),
        mistakes=NETS[kind][1],
    )


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "args", [(2, 5), (1, 4)], ids=["two_convs", "one_conv"]
)
def test_vgg_block_matches_reference(rng, args):
    x = rng.standard_normal((2, 8, 6, 3)).astype("float32")
    spec = vgg_block_spec(*args)
    out, used, facts = run_block(
        "vgg", args, x, init_weights(spec, x.shape, rng)
    )
    expect(
        facts["type"] == "Sequential",
        say("cnn_judge.sequential", call="vgg_block", got=facts["type"]),
    )
    expect_reference(
        out,
        lambda w, mistake=None: forward(vgg_block_spec(*args, mistake), x, w),
        used,
        say("cnn_judge.on", call=f"vgg_block{args}", shape=x.shape),
        mistakes=(VGG_POOL_PER_CONV,),
        hint=say("l02.vgg_block_hint", channels=args[1]),
    )


@pytest.mark.points(2)
@pytest.mark.parametrize(
    "args",
    [(5, 3, 2, "valid"), (4, 5, 1, "same")],
    ids=["k3_s2_valid", "k5_s1_same"],
)
def test_nin_block_matches_reference(rng, args):
    x = rng.standard_normal((2, 9, 11, 3)).astype("float32")
    spec = nin_block_spec(*args)
    out, used, facts = run_block(
        "nin", args, x, init_weights(spec, x.shape, rng)
    )
    expect(
        facts["type"] == "Sequential",
        say("cnn_judge.sequential", call="nin_block", got=facts["type"]),
    )
    expect_reference(
        out,
        lambda w, mistake=None: forward(nin_block_spec(*args, mistake), x, w),
        used,
        say("cnn_judge.on", call=f"nin_block{args}", shape=x.shape),
        mistakes=(NIN_NO_1X1,),
        hint=say("l02.nin_block_hint"),
    )


SMOKE = {
    "alexnet": (
        {
            "num_classes": 4,
            "widths": (8, 16, 16, 16, 16),
            "num_hiddens": 32,
            "dropout": 0.0,
        },
        (67, 67),
    ),
    "vgg": (
        {
            "conv_arch": ((1, 8), (1, 16)),
            "num_classes": 4,
            "num_hiddens": 32,
            "dropout": 0.0,
        },
        (16, 16),
    ),
    "nin": (
        {"num_classes": 4, "widths": (8, 16, 16), "dropout": 0.0},
        (67, 67),
    ),
}


# Adam steps per network: each falls by 10% well within them (NiN, ReLUs
# all the way to its logits, starts slowest).
SMOKE_STEPS = {"alexnet": 6, "vgg": 4, "nin": 10}


@pytest.mark.parametrize("kind", ["alexnet", "vgg", "nin"])
def test_narrow_network_trains(kind):
    """Smoke: Adam on 16 generated images (a bright square in one of four
    quadrants, standardised); the loss falls by 10% within a few steps."""
    kwargs, (h, w) = SMOKE[kind]
    steps = SMOKE_STEPS[kind]
    x, y = toy_images(16, h, w, standardised=True)
    losses = run_training(kind, kwargs, x, y, steps)
    expect_loss_falls(losses, say("cnn_judge.narrow", net=kind))
