"""TensorFlow as grading loads and seeds it (m2t/grading/tfsetup.py): every
probe starts from the same random state as after
`keras.utils.set_random_seed`, TensorFlow's kernel cache is emptied only
once a stateful random op has drawn a seed, and oneDNN's custom ops are off
in the grading process without leaking into the environment.

Each case runs in a fresh Python: TensorFlow's seed, its kernel cache and
the seed watch are per process."""

from __future__ import annotations

import json
import subprocess
import sys

from m2t import settings
from tests.conftest import ROOT

DRAWS = """
import json, random, sys
import numpy as np
import keras
import tensorflow as tf
from m2t.grading import probe, tfsetup

def draws():
    return {
        "python": random.random(),
        "numpy": float(np.random.rand()),
        "keras": keras.ops.convert_to_numpy(keras.random.normal((3,))).tolist(),
        "tf_stateful": tf.random.uniform((3,)).numpy().tolist(),
    }

clears = []  # every tf.random.set_seed: each empties the kernel cache
set_seed = tf.random.set_seed
tf.random.set_seed = lambda seed: (clears.append(seed), set_seed(seed))[1]
"""


def _run(
    script: str, env: dict | None = None, *args: str
) -> subprocess.CompletedProcess:
    """`script` in a fresh Python, with `args`; `env` (default: ours,
    TensorFlow quiet)."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        env=settings.quiet_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _json(script: str, *args: str) -> dict:
    result = _run(script, None, *args)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


WANT = (
    DRAWS
    + """
keras.utils.set_random_seed(7)
want = draws()  # what a fresh process draws after set_random_seed(7)
probe.configure_tensorflow()
"""
)


def test_each_probe_starts_from_the_same_random_state_as_set_random_seed():
    out = _json(
        WANT
        + """
got = []
for _ in range(3):  # the stateful draw moves TensorFlow's state each time
    probe.seed_everything(7)
    got.append(draws())
print(json.dumps({"want": want, "got": got}))
"""
    )
    for got in out["got"]:
        assert got == out["want"]


def test_the_kernel_cache_is_kept_until_a_stateful_random_op_draws_a_seed():
    out = _json(
        DRAWS
        + """
probe.configure_tensorflow()
probe.seed_everything(7)  # the first: TensorFlow's seed was never set
first = len(clears)
for _ in range(3):
    probe.seed_everything(7)
    keras.random.normal((3,))  # stateless: the cache holds nothing random
    keras.layers.Dropout(0.5)(tf.ones((4,)), training=True)
kept = len(clears)
tf.nn.dropout(tf.ones((4,)), 0.5)  # stateful: it draws a seed
for _ in range(2):
    probe.seed_everything(7)
again = len(clears)
tf.random.set_seed(3)  # the student's own seed: the next reset undoes it
probe.seed_everything(7)
print(json.dumps({"first": first, "kept": kept, "again": again,
                  "after_own_seed": len(clears)}))
"""
    )
    assert out["first"] == 1
    assert out["kept"] == 1, "a reset emptied the kernel cache for nothing"
    assert out["again"] == 3, "after a stateful draw every reset is full"
    assert out["after_own_seed"] == 5  # the student's call, then ours


def test_a_seed_reset_after_the_students_own_seed_is_a_full_one():
    out = _json(
        WANT
        + """
probe.seed_everything(7)
keras.random.normal((3,))  # nothing stateful: the quick path stays open
tf.random.set_seed(3)  # as a student's code might
probe.seed_everything(7)
print(json.dumps({"want": want, "got": draws()}))
"""
    )
    assert out["got"] == out["want"]


ONEDNN_ON = "oneDNN custom operations are on"

SEEN = """
import json, os, sys

class Seen:
    \"\"\"TF_ENABLE_ONEDNN_OPTS as TensorFlow's import starts (TensorFlow
    reads it then).\"\"\"
    value = "unset"

    def find_spec(self, name, path=None, target=None):
        if name == "tensorflow" and Seen.value == "unset":
            Seen.value = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
        return None

sys.meta_path.insert(0, Seen())
"""
"""A script's head that records what TensorFlow's import is given."""

SAID = (
    "print(json.dumps([Seen.value, os.environ.get('TF_ENABLE_ONEDNN_OPTS')]))"
)


def test_grading_imports_tensorflow_without_onednn_and_restores_the_env():
    """TensorFlow is imported with oneDNN's custom ops off (the variable it
    reads at import is "0"), the caller's environment is restored after,
    and a caller's own choice wins. Where this CPU turns oneDNN on by
    default (TensorFlow's line says so), the line is gone too; where it
    does not (e.g. AMD CPUs), the variable given to the import is the
    evidence, and an explicit "1" shows the line, so the line is read."""
    env = {"PATH": "/usr/bin:/bin"}  # oneDNN's line shows at any log level
    loaded = _run(
        SEEN + "from m2t.grading import tfsetup; tfsetup.load(); " + SAID,
        {**env},
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    # "0" while TensorFlow was imported; unset again afterwards, so that
    # children get the caller's environment
    assert json.loads(loaded.stdout.splitlines()[-1]) == ["0", None]
    assert ONEDNN_ON not in loaded.stderr
    chosen = _run(  # the caller's own choice wins
        SEEN + "from m2t.grading import tfsetup; tfsetup.load(); " + SAID,
        {**env, "TF_ENABLE_ONEDNN_OPTS": "1"},
    )
    assert json.loads(chosen.stdout.splitlines()[-1]) == ["1", "1"]
    assert ONEDNN_ON in chosen.stderr


NAMES = """
import json, sys
from pathlib import Path
from m2t.grading import probe

folder = Path(sys.argv[1])
(folder / "l99_names.py").write_text(
    "import keras\\n"
    "TOP = keras.layers.Dense(3)  # made while the module loads\\n"
    "def layers(n):\\n"
    "    return [keras.layers.Dense(2).name for _ in range(n)]\\n"
)
runner = probe.InProcessRunner(folder)
def ask(n):
    return runner.run("l99_names", lambda m, n: m.layers(n), (n,), {})
first = ask(1)
ask(4)  # another check in between
print(json.dumps({"first": first, "again": ask(1), "more": ask(2)}))
"""


def test_every_probe_names_its_layers_as_a_fresh_process_would(tmp_path):
    out = _json(NAMES, str(tmp_path))
    # "dense" is the module's own layer: a probe's first Dense comes next,
    # whatever the checks before it made
    assert out["first"] == out["again"] == ["dense_1"]
    assert out["more"] == ["dense_1", "dense_2"]
