"""The lesson notebooks' helpers, and `m2t notebook LESSON`.

Each lesson's notebook is a plain-text jupytext "percent" file,
`notebooks/lNN_topic.py`: it diffs like code, and Jupyter opens it as a
notebook when jupytext is installed. `m2t notebook 16` writes the `.ipynb`
beside it (generated, never committed).

In a notebook:

    from m2t.student import notebooks
    m = notebooks.load("16")    # your lessons/l16_*.py, fresh after each save
    notebooks.grade("16")       # the lesson's grader, in this kernel

`M2T_IMPL` picks what `load` and `grade` use (`lessons` by default,
`solutions`, or a folder); `M2T_SHORT=1` asks the heavy cells for a short
version (the notebook tests set both).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from m2t import ROOT
from m2t import curriculum
from m2t import i18n

FOLDER = ROOT / "notebooks"


def impl() -> str:
    """What the notebooks run: `$M2T_IMPL`, or `lessons`."""
    return os.environ.get("M2T_IMPL", "lessons")


def short() -> bool:
    """True when the heavy cells should run their short form."""
    return os.environ.get("M2T_SHORT", "") not in ("", "0")


def load(lesson: str) -> ModuleType:
    """The module of `lesson` ("16", "l16", ...) from `impl()`; re-executed
    when its file has changed since the last call."""
    from m2t.grading import impl as _impl
    from m2t.grading import probe as _probe

    _probe.configure_tensorflow()  # the same determinism as the grader
    _probe.seed_everything()  # which needs a seed before any random op
    module = curriculum.find(lesson).module
    return _impl.load(module, _impl.resolve(impl()))


def grade(lesson: str, verbose: bool = False):
    """Run `lesson`'s grader against `impl()` in this kernel and print the
    table `m2t grade` prints; returns the `LessonResult`. Under
    `M2T_SHORT=1` the checks that train (a capstone's) are left out, said
    so in the table (`m2t.grading.trains`)."""
    from m2t.grading import reports
    from m2t.grading import runner as grading
    from m2t.grading import trains

    chosen = curriculum.find(lesson)
    # the short form leaves the checks that train to `m2t grade`
    plugins = [trains.LeaveOutTraining(False, chosen.id)] if short() else []
    (result,) = grading.grade([chosen], impl=impl(), plugins=plugins)
    grading.save_state([result], impl())
    print(reports.table([result], verbose=verbose))
    score = i18n.text(
        "grade.notebook_score",
        total=f"{result.score:g}",
        most=f"{result.max_score:g}",
        impl=impl(),
    )
    print(f"\n{score}")
    return result


@contextlib.contextmanager
def attempt(what: str) -> Iterator[None]:
    """Run a cell's body; on your lessons, a part you have not written yet
    prints one line instead of stopping "Run all"."""
    try:
        yield
    except NotImplementedError as exc:
        if impl() != "lessons":
            raise
        print(i18n.text("notebook.not_started", what=what, error=exc))


def toy_shapes(steps: int, resize: int | None = None, batch_size: int = 64):
    """The embedded toy_shapes images for a short training.

    Returns:
        `(train, (x_test, y_test))`: `steps` training batches of
        `(batch_size, H, W, 1)` images and `(batch_size,)` labels, and 200
        test images `(200, H, W, 1)` with their labels `(200,)` as NumPy
        arrays; H = W = `resize`, or 28.
    """
    import numpy as np

    import m2t_data

    train = m2t_data.images(resize=resize, batch_size=batch_size).take(steps)
    x_test, y_test = next(
        iter(m2t_data.images("embedded", "test", resize, 200))
    )
    return train, (np.asarray(x_test), np.asarray(y_test))


def fit_and_show(
    net,
    train,
    epochs: int,
    test: tuple,
    lr: float = 1e-3,
    batchnorm_momentum: float | None = None,
):
    """Train a toy_shapes classifier briefly (Adam, cross-entropy from
    logits), print its train and test accuracy, and draw 16 test images
    titled with the predicted class (mistakes in red).

    Args:
        net: a Keras model mapping `(B, H, W, 1)` images to `(B, 10)` logits.
        train, test: from `toy_shapes`.
        epochs: passes over `train`.
        lr: Adam's learning rate.
        batchnorm_momentum: set on every BatchNormalization layer inside
            `net` first; Keras's 0.99 moves the averages used at test time
            too slowly for a training of a few dozen steps (PyTorch's
            default, which d2l uses, is 0.9 in Keras's terms).

    Returns:
        The predicted classes `(N,)`.
    """
    import keras
    import matplotlib.pyplot as plt
    import numpy as np

    from m2t_data.toy_shapes import CLASS_NAMES

    if batchnorm_momentum is not None:
        # Keras has no public walk over the layers nested in custom layers.
        for layer in net._flatten_layers():
            if isinstance(layer, keras.layers.BatchNormalization):
                layer.momentum = batchnorm_momentum
    net.compile(
        optimizer=keras.optimizers.Adam(lr),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    history = net.fit(train, epochs=epochs, shuffle=False, verbose=0)
    print("train accuracy per epoch:", np.round(history.history["accuracy"], 3))
    x_test, y_test = test
    pred = np.argmax(net.predict(x_test, verbose=0), axis=-1)
    print(f"test accuracy on {len(y_test)} images:", (pred == y_test).mean())
    fig, axes = plt.subplots(2, 8, figsize=(11, 3.3))
    for ax, image, p, t in zip(axes.flat, x_test, pred, y_test, strict=False):
        ax.imshow(image[..., 0], cmap="gray")
        ax.set_title(CLASS_NAMES[p], fontsize=9, color="k" if p == t else "r")
        ax.axis("off")
    fig.suptitle("predictions (red: wrong)")
    plt.show()
    return pred


def perplexity_curve(curve: Sequence[float], vocab_size: int) -> None:
    """Plot training perplexity per epoch against the uniform guess (V)."""
    import matplotlib.pyplot as plt

    epochs = range(1, len(curve) + 1)
    plt.figure(figsize=(4.5, 2.8))
    plt.plot(epochs, curve, "o-")
    plt.xticks(epochs)
    plt.axhline(
        vocab_size, color="grey", lw=0.8, label=f"uniform guess ({vocab_size})"
    )
    plt.xlabel("epoch")
    plt.ylabel("training perplexity")
    plt.legend()
    plt.show()


def source(lesson: curriculum.Lesson) -> Path:
    return FOLDER / f"{lesson.module}.py"


def kernel_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a notebook's kernel starts with: `base` (default
    `os.environ`) with TensorFlow's C++ logs at errors only, so its
    start-up lines (CUDA drivers looked for, oneDNN, the CPU's
    instructions) stay out of the cells' outputs: the kernel forwards
    everything its process writes to them."""
    from m2t import settings

    return settings.quiet_env(base)


def execute(lesson: curriculum.Lesson, timeout: float = 600):
    """Run the lesson's notebook top to bottom in a fresh Jupyter kernel,
    headless (nbclient), from the course folder, with `kernel_env()`; the
    executed `nbformat` notebook is returned and also written to
    `notebooks/<module>.ipynb`. `M2T_IMPL` and `M2T_SHORT` reach the
    kernel from this process's environment.

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised.
    """
    import jupytext
    import nbclient

    src = source(lesson)
    if not src.exists():
        raise ValueError(f"{lesson.tag}: no notebook yet ({src.name})")
    notebook = jupytext.read(src)
    client = nbclient.NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name=notebook.metadata.get("kernelspec", {}).get(
            "name", "python3"
        ),
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute(env=kernel_env())
    jupytext.write(notebook, src.with_suffix(".ipynb"))
    return notebook


def write_ipynb(lesson: curriculum.Lesson) -> Path:
    """Write `notebooks/<module>.ipynb` from its percent-format source."""
    import jupytext

    src = source(lesson)
    if not src.exists():
        raise ValueError(f"{lesson.tag}: no notebook yet ({src.name})")
    notebook = jupytext.read(src)
    notebook.metadata.setdefault(
        "kernelspec",
        {"name": "python3", "display_name": "Python 3", "language": "python"},
    )
    target = src.with_suffix(".ipynb")
    jupytext.write(notebook, target)
    return target
