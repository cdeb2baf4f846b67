"""The recipes: one per model family, with d2l's hyper-parameters.

A recipe names the reference module that holds the model, the family code
that trains it (images.py, sine.py, language.py, translation.py) and its
settings: d2l's (first edition, PyTorch/TensorFlow tabs) unless the notes
say otherwise, then per data source, then the short form `smoke`, then the
command line. Importing this module imports no TensorFlow, so
`m2t train --list` is quick.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from .settings import OPTIONAL_SETTINGS
from .settings import check

# Translation test sentences of d2l's 600-pair setting, with references.
D2L_ENGLISH = ["go .", "i lost .", "he's calm .", "i'm home ."]
D2L_FRENCH = ["va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."]


@dataclass(frozen=True)
class Recipe:
    """How to train one model.

    Attributes:
        name: the command-line name, e.g. "transformer".
        family: the training code in training/, e.g. "translation".
        lesson: the reference module, e.g. "l20_transformer".
        title: one line for `--list`.
        settings: d2l's hyper-parameters.
        per_data: settings that differ by data source ("embedded", "real").
        smoke: the short form (tiny sizes, a few steps) used by the tests.
        quick: a setting that shows the model learn in a few minutes on
            2 CPU cores (images: smaller inputs, fewer images, the same
            architecture; `--quick`), or empty.
        notes: where the settings differ from d2l, and why.
        needs: other reference modules the family uses (vocabulary,
            BLEU, greedy prediction).
    """

    name: str
    family: str
    lesson: str
    title: str
    settings: dict[str, Any]
    per_data: dict[str, dict[str, Any]] = field(default_factory=dict)
    smoke: dict[str, Any] = field(default_factory=dict)
    quick: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    needs: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """The reference modules it needs that are not there (yet)."""
        absent = []
        for name in (self.lesson, *self.needs):
            try:
                found = importlib.util.find_spec(f"solutions.{name}")
            except ModuleNotFoundError:
                found = None
            if found is None:
                absent.append(name)
        return absent

    def available(self) -> bool:
        return not self.missing()

    def resolve(
        self,
        source: str,
        *,
        smoke: bool = False,
        quick: bool = False,
        overrides: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The settings for one run: d2l's, then per data, the short form
        (`smoke`) or the quick one, then the overrides."""
        if source not in ("embedded", "real"):
            raise ValueError(
                f"`data` must be 'embedded' or 'real', got {source!r}"
            )
        if smoke and quick:
            raise ValueError("--smoke and --quick: choose one")
        if quick and not self.quick:
            with_quick = ", ".join(n for n, r in RECIPES.items() if r.quick)
            raise ValueError(
                f"--quick: {self.name} has no quick setting (the image "
                f"models have: {with_quick})"
            )
        resolved = {**self.settings, **self.per_data.get(source, {})}
        if smoke:
            resolved.update(self.smoke)
        if quick:
            resolved.update(self.quick)
        for key, value in (overrides or {}).items():
            if value is None:
                continue
            if key not in resolved and key not in OPTIONAL_SETTINGS:
                known = ", ".join(sorted(resolved))
                raise ValueError(
                    f"{self.name} has no setting {key!r}; it has: {known}"
                )
            resolved[key] = check(key, value, resolved.get(key))
        return resolved

    def family_module(self):
        return importlib.import_module(f"training.{self.family}")


# The short form memorises a few examples, so the loss falls within steps
# (Adam: d2l's SGD rates need many more steps than a test can pay for).
_IMAGE_SMOKE = {
    "validate": False,  # the test accuracy comes from one pass at the end
    "epochs": 3,
    "batch_size": 16,
    "max_steps": 4,
    "examples": 64,
    "test_examples": 64,
    "optimizer": "adam",
    "lr": 0.001,
}
# Quick: the same networks on smaller inputs (32 x 32; 72 x 72 for AlexNet
# and NiN, whose 11 x 11 stride-4 stem and three poolings need about 67)
# and a third of the images, in batches of 32 so that a few minutes buy a
# few hundred steps; Adam instead of d2l's SGD rates, which need d2l's
# thousands of steps. Measured in docs/training.md.
_IMAGE_QUICK = {
    "examples": 2048,
    "batch_size": 32,
    "optimizer": "adam",
    "lr": 0.001,
    "epochs": 5,
    "resize": 32,
}
# Batch normalisation's test-time averages moving at PyTorch's pace
# (d2l's momentum 0.1 is Keras's 0.9): with Keras's 0.99 they still hold
# 0.99^128 = 28% of their initial values after ResNet-18's 128 steps.
_BATCHNORM_QUICK = {"batchnorm_momentum": 0.9}
_LM_SMOKE = {
    "epochs": 3,
    "batch_size": 8,
    "num_steps": 10,
    "num_hiddens": 16,
    "max_tokens": 2000,
    "max_steps": 5,
}
_MT_SMOKE = {
    "epochs": 3,
    "batch_size": 16,
    "num_hiddens": 16,
    "num_examples": 200,
    "max_steps": 5,
    "test_examples": 8,
}
_LM_NOTES = (
    "Sequential partitioning with the state carried across minibatches "
    "(d2l's default; --set sampling=random for the other); embedded: the "
    "first 10,000 characters of toy_char_corpus."
)
_MT_NOTES = (
    "real: d2l's 600-pair fra-eng setting, BLEU on its 4 test sentences; "
    "embedded: the 3,000 train pairs of toy_fra_eng, BLEU on its 300 "
    "held-out pairs,"
)


def _image(
    name, lesson, title, settings, notes="", smoke=None, quick=None
) -> Recipe:
    base = {
        "optimizer": "sgd",
        "clip": None,
        "epochs": 10,
        "examples": None,  # all the training images
        "test_examples": None,  # all the test images
        "validate": True,
        # Convolutions are large ops: TensorFlow's default splits each
        # over all cores (mlp overrides: its ops are small).
        "op_threads": 0,
    }
    return Recipe(
        name,
        "images",
        lesson,
        title,
        {**base, **settings},
        smoke={**_IMAGE_SMOKE, **(smoke or {})},
        quick={**_IMAGE_QUICK, **(quick or {})},
        notes=(
            "Fashion-MNIST with --data real (TFDS, must be prepared); "
            "toy_shapes by default. " + notes
        ).strip(),
    )


def _lm(name, lesson, title, settings, notes="") -> Recipe:
    base = {
        "optimizer": "sgd",
        "clip": 1.0,
        "epochs": 500,
        "batch_size": 32,
        "num_steps": 35,
        "lr": 1.0,
        "max_tokens": 10000,
        "sampling": "sequential",
        "op_threads": 1,
    }
    return Recipe(
        name,
        "language",
        lesson,
        title,
        {**base, **settings},
        smoke=dict(_LM_SMOKE),
        notes=(_LM_NOTES + " " + notes).strip(),
        needs=("l06_text_preprocessing", "l08_rnn_scratch"),
    )


def _mt(name, lesson, title, settings, embedded, notes="") -> Recipe:
    base = {
        "optimizer": "adam",
        "clip": 1.0,
        "lr": 0.005,
        "batch_size": 64,
        "num_steps": 10,
        "num_hiddens": 32,
        "num_layers": 2,
        "dropout": 0.1,
        "num_examples": 600,
        "test_examples": None,
        "op_threads": 1,
    }
    return Recipe(
        name,
        "translation",
        lesson,
        title,
        {**base, **settings},
        per_data={
            "embedded": {"num_examples": None, **embedded},
        },
        smoke=dict(_MT_SMOKE),
        notes=(_MT_NOTES + " " + notes).strip(),
        needs=(
            "l06_text_preprocessing",
            "l13_machine_translation_data",
            "l14_seq2seq",
        ),
    )


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in [
        _image(
            "mlp",
            "l01_mlp",
            "one-hidden-layer MLP",
            {
                "num_hiddens": 256,
                "lr": 0.1,
                "batch_size": 256,
                "resize": None,
                "op_threads": 1,
            },
            smoke={"validate": True},
            quick={"resize": None},
        ),
        _image(
            "alexnet",
            "l02_classic_cnns",
            "AlexNet",
            {"lr": 0.01, "batch_size": 128, "resize": 224},
            smoke={"resize": 72, "ratio": 16},
            quick={"resize": 72},
        ),
        _image(
            "vgg",
            "l02_classic_cnns",
            "VGG-11, channels / 4 (d2l's small_conv_arch)",
            {"lr": 0.05, "batch_size": 128, "resize": 224, "ratio": 4},
            smoke={"resize": 32, "ratio": 16},
        ),
        _image(
            "nin",
            "l02_classic_cnns",
            "Network in Network",
            {"lr": 0.1, "batch_size": 128, "resize": 224},
            smoke={"resize": 72, "ratio": 8},
            quick={"resize": 72},
        ),
        _image(
            "googlenet",
            "l03_inception_resnet",
            "GoogLeNet",
            {"lr": 0.1, "batch_size": 128, "resize": 96},
            smoke={"resize": 32},
        ),
        _image(
            "resnet18",
            "l03_inception_resnet",
            "ResNet-18",
            {"lr": 0.05, "batch_size": 256, "resize": 96, "ratio": 1},
            smoke={"resize": 32, "ratio": 8},
            quick={"epochs": 2, **_BATCHNORM_QUICK},
        ),
        _image(
            "densenet",
            "l04_densenet",
            "DenseNet",
            {"lr": 0.1, "batch_size": 256, "resize": 96, "ratio": 1},
            smoke={"resize": 32, "ratio": 8},
            quick={"epochs": 3, **_BATCHNORM_QUICK},
        ),
        Recipe(
            "ar_mlp",
            "sine",
            "l05_sequence_models",
            "autoregressive MLP on the noisy sine (tau = 4)",
            {
                "optimizer": "adam",
                "clip": None,
                "epochs": 5,
                "batch_size": 16,
                "lr": 0.01,
                "tau": 4,
                "num_hiddens": 10,
                "T": 1000,
                "n_train": 600,
                "op_threads": 1,
            },
            per_data={"real": {}},
            smoke={"epochs": 2, "max_steps": 8},
            notes="The noisy sine is generated (d2l's too): --data real is "
            "the same series.",
        ),
        _lm(
            "rnn_scratch",
            "l08_rnn_scratch",
            "RNN from scratch (one-hot inputs, tanh)",
            {"num_hiddens": 512},
        ),
        _lm(
            "rnn",
            "l09_rnn_concise",
            "RNN on keras SimpleRNN",
            {"num_hiddens": 256},
        ),
        _lm("gru", "l10_gru", "GRU (our GRUCell)", {"num_hiddens": 256}),
        _lm("lstm", "l11_lstm", "LSTM (our LSTMCell)", {"num_hiddens": 256}),
        _lm(
            "deep_rnn",
            "l12_deep_bidirectional_rnn",
            "two stacked LSTM layers",
            {"num_hiddens": 256, "num_layers": 2, "lr": 2.0},
        ),
        _mt(
            "seq2seq",
            "l14_seq2seq",
            "RNN encoder-decoder (GRU)",
            {"epochs": 300, "embed_size": 32},
            embedded={"epochs": 60},
            notes="60 epochs: d2l's number of steps (300 x 9 ~ 60 x 46).",
        ),
        _mt(
            "bahdanau",
            "l17_bahdanau_attention",
            "GRU encoder-decoder with additive attention",
            {"epochs": 250, "embed_size": 32},
            embedded={"epochs": 50},
            notes="50 epochs: d2l's number of steps (250 x 9 ~ 50 x 46).",
        ),
        _mt(
            "transformer",
            "l20_transformer",
            "Transformer encoder-decoder (post-norm)",
            {"epochs": 200, "ffn_num_hiddens": 64, "num_heads": 4},
            embedded={"epochs": 30, "batch_size": 128},
            notes="batch 128 and 30 epochs (about 45 s on 2 CPU cores).",
        ),
    ]
}


def get(name: str) -> Recipe:
    """The recipe called `name`; a ValueError listing them otherwise."""
    if name not in RECIPES:
        raise ValueError(
            f"no model {name!r}; choose from: {', '.join(RECIPES)}"
        )
    return RECIPES[name]


_SHOWN = (
    "epochs",
    "batch_size",
    "lr",
    "optimizer",
    "clip",
    "resize",
    "num_steps",
    "num_hiddens",
    "num_layers",
    "embed_size",
    "ffn_num_hiddens",
    "num_heads",
    "dropout",
    "tau",
    "ratio",
    "num_examples",
    "max_tokens",
)


def table(source: str = "embedded") -> str:
    """`m2t train --list`: each model with its data and settings."""
    lines, missing = [], []
    for recipe in RECIPES.values():
        if not recipe.available():
            missing.append(recipe)
            continue
        s = recipe.resolve(source)
        shown = ", ".join(
            f"{k}={s[k]}" for k in _SHOWN if k in s and s[k] is not None
        )
        lines.append(f"{recipe.name:<12} {recipe.title} [{recipe.lesson}]")
        lines.append(f"{'':<12} data: {_data_name(recipe, source)}")
        lines.append(f"{'':<12} {shown}")
        if recipe.quick:
            quick = ", ".join(
                f"{k}={v}" for k, v in recipe.quick.items() if v is not None
            )
            lines.append(f"{'':<12} --quick: {quick}")
        if recipe.notes:
            lines.append(f"{'':<12} notes: {recipe.notes}")
    if missing:
        lines.append("")
        lines.append(
            "left out (a reference module they need is missing): "
            + ", ".join(f"{r.name} ({', '.join(r.missing())})" for r in missing)
        )
    return "\n".join(lines)


def _data_name(recipe: Recipe, source: str) -> str:
    names = {
        "images": ("toy_shapes (generated, 28x28)", "Fashion-MNIST (TFDS)"),
        "sine": ("noisy_sine (generated)", "noisy_sine (generated)"),
        "language": ("toy_char_corpus (generated)", "The Time Machine"),
        "translation": ("toy_fra_eng (generated)", "fra-eng (Tatoeba)"),
    }
    return names[recipe.family][source == "real"] + f" [--data {source}]"
