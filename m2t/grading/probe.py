"""Probe and judge: how a grader check reaches the student's code.

A *probe* is a small module-level function in a grader file, decorated with
`lesson.probe`. It receives the student's module as its first argument,
builds the layer, calls it and returns plain data. The check calls the probe
(without the module argument), gets back only NumPy arrays and Python
scalars, and *judges* them in its own process.

Locally the probe runs in this process (`InProcessRunner`); when grading a
submission, a sandboxed worker runs it (`m2t.grading.sandbox`), so student
code never shares a process with the judge.
"""

from __future__ import annotations

import functools
import linecache
import random
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from m2t import ROOT
from m2t import i18n
from m2t import settings
from m2t.grading import guard as _guard
from m2t.grading import impl as _impl
from m2t.grading import noautodiff
from m2t.grading import tfsetup

SEED = 0


class ProbeFailure(Exception):
    """The student's code could not produce an answer (not a wrong answer).

    `status` is "not_started" or "error"; `str(self)` is the one line a
    student reads.
    """

    status = "error"


class NotStarted(ProbeFailure):
    status = "not_started"


class StudentError(ProbeFailure):
    status = "error"


def _display(path: str | Path) -> str:
    path = Path(path)
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _todo_line(path: str, line: int) -> int:
    """The `# TODO(lNN)` comment above a `raise NotImplementedError`."""
    for candidate in range(line, max(line - 60, 0), -1):
        if "# TODO(" in linecache.getline(path, candidate):
            return candidate
    return line


class TimeLimit(StudentError):
    """A check stopped at its time limit: the limit, never a line of the
    student's code (where the clock ran out is no fault found there)."""


_TIME_LIMIT = re.compile(r"Timeout \(>([0-9.]+)s\) from pytest-timeout")
"""pytest-timeout's interruption of a check (the limit in seconds)."""


def time_limit(exc: BaseException | None) -> float | None:
    """The limit, in seconds, where `exc` is pytest-timeout stopping a
    check, or what it was raised from or during (code that catches the
    interruption and raises another error); else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = _TIME_LIMIT.search(str(exc))
        if found:
            return float(found.group(1))
        seconds = _in_timeout_handler(exc.__traceback__)
        if seconds is not None:
            return seconds
        exc = exc.__cause__ or exc.__context__
    return None


def _in_timeout_handler(tb) -> float | None:
    """The limit where a traceback passes through pytest-timeout's alarm
    handler: there it raises its own failure, or, in a pytest session
    without a terminal (the runner's), fails looking for one, and the
    error it raises instead carries no word of the limit."""
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_globals.get("__name__") == "pytest_timeout":
            seconds = getattr(frame.f_locals.get("settings"), "timeout", None)
            if seconds:
                return float(seconds)
        tb = tb.tb_next
    return None


def time_limit_error(tag: str, seconds: float) -> TimeLimit:
    """What a student reads when a check of `tag` reached its limit."""
    return TimeLimit(
        i18n.text("probe.time_limit", tag=tag, seconds=f"{seconds:g}")
    )


def explain_exception(
    exc: BaseException, tag: str, folder: Path
) -> ProbeFailure:
    """Turn an exception from student code into the line a student reads.

    `NotImplementedError` raised by a skeleton's own line becomes "l16
    masked_softmax: not started (TODO at lessons/l16_attention_scoring.py:
    LINE)"; one raised deeper (TensorFlow refusing NumPy on a symbolic
    tensor) is an error like any other. Any other exception becomes "l16:
    your code raised TYPE at FILE:LINE (in FUNCTION): MESSAGE", the message
    unwrapped from what Keras puts around it (the cause kept). A check
    stopped at its time limit says so, with the limit and how to raise it,
    and names no line: the clock ran out there, no fault was found.
    """
    limit = time_limit(exc)
    if limit is not None:
        return time_limit_error(tag, limit)
    folder = folder.resolve()
    stack = traceback.extract_tb(exc.__traceback__)
    frames = [
        f for f in stack if Path(f.filename).resolve().is_relative_to(folder)
    ]
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{_display(exc.filename)}:{exc.lineno}"
        return StudentError(
            i18n.text("probe.syntax_error", tag=tag, where=where, error=exc.msg)
        )
    if (
        isinstance(exc, NotImplementedError)
        and frames
        and stack[-1] is frames[-1]
    ):
        last = frames[-1]
        what = re.sub(rf"^{tag}:\s*", "", str(exc)) or last.name
        todo = _todo_line(last.filename, last.lineno)
        where = f"{_display(last.filename)}:{todo}"
        return NotStarted(
            i18n.text("probe.not_started", tag=tag, what=what, where=where)
        )
    where = (
        i18n.text(
            "probe.raised_where",
            file=_display(frames[-1].filename),
            line=frames[-1].lineno,
            function=frames[-1].name,
        )
        if frames
        else ""
    )
    detail = _cause(str(exc))
    return StudentError(
        i18n.text(
            "probe.raised",
            tag=tag,
            type=type(exc).__name__,
            where=where,
            detail=i18n.text("probe.raised_detail", detail=detail)
            if detail
            else "",
        )
    )


_KERAS_INFER = re.compile(
    r"Could not automatically infer the output shape / dtype of '[^']*' "
    r"\(of type (\w+)\)\..*?Error encountered:\s*",
    re.S,
)
_KERAS_FILTERED = re.compile(
    r"Exception encountered when calling ([\w.]+?)\.?\n\n(?:\x1b\[1m)?"
    r"(.*?)(?:\x1b\[0m)?(?:\n\nArguments received by .*)?$",
    re.S,
)
_TF_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*|\s+name:\s*$")
# graph-mode shape errors: "... for '{{node add}} = AddV2[T=DT_FLOAT](a, b)'
# with input shapes: ..." names the op; the node and its inputs are noise
_TF_OP_NODE = re.compile(
    r" for '\{\{node [^}]*\}\} = (\w+)(?:\[[^'\]]*\])?(?:\([^')]*\))?'"
)
_TF_NODE_REF = re.compile(
    r"\s*\[\[\{\{node [^}]*\}\}\]\]|\{\{node [^}]*\}\}\s*"
)
# tf.function's "in user code:" traceback, then the error itself
_TF_USER_CODE = re.compile(
    r"^in user code:\n(?P<frames>.*?)\n\n\s*\w+: (?P<error>.*)$", re.S
)
_SCALAR_RESHAPE = (
    " A reshape's shape is a tuple: tf.reshape(x, shape=(-1,)) or "
    "ops.reshape(x, (-1,)), not shape=-1 (a bare -1 runs eagerly only)."
)


def strip_tf_noise(text: str) -> str:
    """`text` without TensorFlow's op-node noise: the `{{function_node
    ...}}` prefix, the trailing "name:", and `{{node add}} =
    AddV2[T=DT_FLOAT](a, b)` made "in AddV2"."""
    text = _TF_OP_NODE.sub(r" in \1", text)
    return _TF_NODE_REF.sub("", _TF_NODE.sub("", text))


def _traced(text: str) -> tuple[str, str]:
    """(the error, where it was raised) of tf.function's "in user code:"
    traceback; (text, "") for any other message."""
    found = _TF_USER_CODE.match(text)
    if not found:
        return text, ""
    code = [
        line.strip()
        for line in found.group("frames").splitlines()
        if line.strip() and not line.strip().startswith("File ")
    ]
    where = (
        f" (at `{code[-1]}`, traced by tf.function in this check)"
        if code
        else " (traced by tf.function in this check)"
    )
    return found.group("error").strip(), where


def _cause(message: str, limit: int = 600) -> str:
    """The part of an exception's message a student acts on: Keras's
    wrappers ("Could not automatically infer the output shape ... Error
    encountered:", "Exception encountered when calling ...") and
    tf.function's "in user code:" traceback give way to the error they
    wrap (with the line tf.function traced), TensorFlow's op-node noise
    goes (`strip_tf_noise`), and NumPy on a symbolic tensor and a scalar
    reshape shape get the way out."""
    text, traced_at = _traced(message.strip())
    context = ""
    if infer := _KERAS_INFER.match(text):
        context = f"(calling {infer.group(1)} on keras.Input) "
        text = text[infer.end() :]
    elif filtered := _KERAS_FILTERED.match(text):
        text = filtered.group(2).strip()
    text = strip_tf_noise(text)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    text = " ".join(lines[:4])
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    text += traced_at
    if "rank 1 but is rank 0" in text and "Reshape" in text:
        text += _SCALAR_RESHAPE
    if "symbolic" in text and "numpy" in text.lower():
        text += (
            " Inside a layer use keras.ops, not NumPy: on keras.Input the "
            "tensors have no values yet."
        )
    return context + text


def plain(value: Any, path: str = "result") -> Any:
    """Copy a probe's result into plain data the judge can trust.

    Accepts NumPy arrays (numeric or bool), TensorFlow/Keras tensors and
    variables (converted), NumPy scalars and Python scalars, strings, None,
    and lists, tuples and str-keyed dicts of these. Anything else raises
    `TypeError` naming where it was found: a student's object never reaches
    the judge.
    """
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if type(value) is np.ndarray:
        if value.dtype.kind not in "biuf":
            raise TypeError(
                f"{path}: array of dtype {value.dtype} is not numeric"
            )
        return value.copy()
    if type(value) in (list, tuple):
        items = [plain(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if type(value) is tuple else items
    if type(value) is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError(f"{path}: dict key {key!r} is not a str")
            out[key] = plain(item, f"{path}[{key!r}]")
        return out
    array = _tensor_to_numpy(value)
    if array is not None:
        return plain(array, path)
    raise TypeError(
        f"{path}: got a {type(value).__module__}.{type(value).__qualname__}, "
        "expected an array or a tensor"
    )


def _tensor_to_numpy(value: Any) -> np.ndarray | None:
    module = type(value).__module__ or ""
    if not module.startswith(("tensorflow", "keras")):
        return None
    import keras
    import tensorflow as tf

    if isinstance(value, (tf.Tensor, tf.Variable, keras.Variable)):
        return np.array(keras.ops.convert_to_numpy(value))
    if isinstance(value, keras.KerasTensor):
        raise TypeError(
            "got a symbolic KerasTensor, expected concrete values: "
            "do not create keras.Input inside the layer's call"
        )
    return None


def seed_everything(seed: int = SEED) -> None:
    """Same seed before every probe: same weights, same grade, every run
    (`keras.utils.set_random_seed`, less the cost `tfsetup.reset_seeds`
    avoids). Without Keras (a lesson graded by hand): Python's and
    NumPy's."""
    if "keras" not in sys.modules:
        random.seed(seed)
        np.random.seed(seed)
        return
    tfsetup.reset_seeds(seed)


class InProcessRunner:
    """Runs probes in this process against the modules in `folder`."""

    def __init__(self, folder: Path, by_hand: bool = False):
        """`by_hand`: every module is graded without autodiff, and
        TensorFlow is never loaded (a by-hand lesson's worker)."""
        self.folder = folder
        self.by_hand = by_hand
        self.pristine = _guard.Snapshot()
        if not by_hand:
            tfsetup.load()
            configure_tensorflow()

    def _unchanged(self, tag: str, fn: Callable[..., Any]) -> None:
        """A StudentError when the student's module changed the grader's
        own functions (`m2t.grading.guard`) that the probe `fn` runs."""
        changed = self.pristine.changed(getattr(fn, "__module__", "") or "")
        if changed:
            raise StudentError(
                i18n.text(
                    "probe.grader_changed",
                    tag=tag,
                    names=", ".join(changed[:5]),
                )
            )

    def run(
        self, module: str, fn: Callable[..., Any], args: tuple, kwargs: dict
    ) -> Any:
        if not (self.by_hand or noautodiff.is_by_hand(module)):
            return self._run(module, fn, args, kwargs)
        with noautodiff.guarded() as loaded:  # a lesson graded by hand
            result = self._run(module, fn, args, kwargs)
        if loaded:
            raise StudentError(
                i18n.text(
                    "probe.autodiff_used",
                    tag=module.split("_", 1)[0],
                    names=", ".join(loaded[:3]),
                )
            )
        return result

    def _run(
        self, module: str, fn: Callable[..., Any], args: tuple, kwargs: dict
    ) -> Any:
        tag = module.split("_", 1)[0]
        names = tfsetup.name_counts()
        self.pristine.take()  # before any student code runs
        try:
            student = _impl.load(module, self.folder)
        except FileNotFoundError:
            raise StudentError(
                f"{tag}: {_display(self.folder / (module + '.py'))} is missing"
            ) from None
        except Exception as exc:  # a syntax error costs this lesson only
            raise explain_exception(exc, tag, self.folder) from None
        tfsetup.fresh_names(student, names)
        self._unchanged(tag, fn)
        seed_everything()
        try:
            result = fn(student, *args, **kwargs)
        except (KeyboardInterrupt, ProbeFailure):
            raise
        except BaseException as exc:  # SystemExit too: the grader survives
            raise explain_exception(exc, tag, self.folder) from None
        self._unchanged(tag, fn)
        try:
            return plain(result)
        except TypeError as exc:
            raise StudentError(f"{tag}: {exc}") from None


_TF_CONFIGURED = False


def configure_tensorflow() -> None:
    """Deterministic ops, no TF32 on GPUs: CPU and GPU grade alike."""
    global _TF_CONFIGURED
    if _TF_CONFIGURED:
        return
    settings.quiet_tensorflow()
    import keras
    import tensorflow as tf

    # Keep exceptions as raised: Keras would otherwise rewrite their messages
    # and hide the student's frames that the messages point to.
    keras.config.disable_traceback_filtering()
    tf.config.experimental.enable_op_determinism()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    tfsetup.watch_stateful_random()
    _TF_CONFIGURED = True


_RUNNER: Any = None


def set_runner(runner: Any) -> None:
    """Install the runner the probes use (the grader conftest does this)."""
    global _RUNNER
    _RUNNER = runner


def runner() -> Any:
    global _RUNNER
    if _RUNNER is None:
        _RUNNER = InProcessRunner(_impl.resolve("lessons"))
    return _RUNNER


class Lesson:
    """The student module a grader file checks, e.g.
    `Lesson("l16_attention_scoring")`; its `probe` decorator marks probes."""

    def __init__(self, module: str):
        self.module = module

    def probe(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorate `fn(m, *args)`; call it as `fn(*args)` from a check."""

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            return runner().run(self.module, fn, args, kwargs)

        call.raw = fn  # type: ignore[attr-defined]
        return call
