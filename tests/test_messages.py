"""Messages built from TensorFlow's errors: the real error and the line
that raised it, never tf.function's bare "in user code:" or TensorFlow's
op-node noise (`{{node add}} = AddV2[T=DT_FLOAT](a, b)`); a gradient that
left the tape is named as such."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

STUDENT = """
import keras
import numpy as np
import tensorflow as tf


def flat_lengths(valid_lens):
    return tf.reshape(valid_lens, shape=-1)


class AddsFive(keras.layers.Layer):
    def call(self, x):
        return x + keras.ops.ones((5,))


class NumPyInside(keras.layers.Layer):
    def call(self, x):
        return keras.ops.convert_to_tensor(np.tanh(np.asarray(x)))
"""


@pytest.fixture
def student(tmp_path):
    path = tmp_path / "l99_student.py"
    path.write_text(textwrap.dedent(STUDENT))
    spec = importlib.util.spec_from_file_location("l99_student", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, tmp_path


def explain(call, folder) -> str:
    from m2t.grading.probe import explain_exception

    with pytest.raises(Exception) as info:
        call()
    return str(explain_exception(info.value, "l99", folder))


def test_an_error_inside_tf_function_shows_the_error_and_the_line(student):
    import tensorflow as tf

    module, folder = student
    traced = tf.function(module.flat_lengths)
    # eagerly the scalar shape passes: only the traced graph refuses it
    assert module.flat_lengths(tf.constant([[1, 2]])).shape == (2,)
    text = explain(lambda: traced(tf.constant([[1, 2], [3, 4]])), folder)
    assert "in user code" not in text, text
    assert "Shape must be rank 1 but is rank 0" in text, text
    assert "`return tf.reshape(valid_lens, shape=-1)`" in text, text
    assert "traced by tf.function" in text, text
    assert "shape=(-1,)" in text, text
    assert "{{node" not in text and "Tshape" not in text, text


def test_a_graph_shape_error_names_the_op_not_the_node(student):
    import keras

    module, folder = student
    text = explain(lambda: module.AddsFive()(keras.Input((3, 4))), folder)
    assert "in AddV2 with input shapes: [?,3,4], [5]" in text, text
    assert "{{node" not in text and "DT_FLOAT" not in text, text


def test_strip_tf_noise_on_tensorflows_own_errors():
    import tensorflow as tf

    from m2t.grading.probe import strip_tf_noise

    @tf.function
    def add(a, b):
        return a + b

    messages = []
    for call in (
        lambda: tf.constant(np.zeros((2, 3))) + tf.constant(np.zeros(5)),
        lambda: add(tf.zeros((2, 3)), tf.zeros((5,))),
    ):
        with pytest.raises(Exception) as info:
            call()
        messages.append(str(info.value))
    assert any("{{" in m for m in messages), messages  # TF's noise is there
    for message in messages:
        clean = strip_tf_noise(message)
        assert "{{" not in clean and not clean.rstrip().endswith("name:")
        assert "Incompatible shapes" in clean or "must be equal" in clean


def test_a_gradient_that_left_the_tape_is_named(student):
    import tensorflow as tf

    from graders.lib.probes import tape_gradient
    from m2t.grading.probe import StudentError

    module, _ = student
    layer = module.NumPyInside(dtype="float64")
    x = np.random.default_rng(0).standard_normal((2, 3))
    with pytest.raises(StudentError, match="gradient came back empty") as e:
        tape_gradient(lambda v: tf.reduce_sum(layer(v)), x)
    assert "NumPy inside call" in str(e.value)
    # traced, the same layer is taped eagerly: the same message
    traced = tf.function(lambda v: tf.reduce_sum(layer(v)))
    with pytest.raises(StudentError, match="gradient came back empty"):
        tape_gradient(traced, x)
    grad = tape_gradient(lambda v: tf.reduce_sum(tf.tanh(v)), x)
    np.testing.assert_allclose(grad, 1 - np.tanh(x) ** 2, rtol=1e-12)


def test_eager_float32_meets_float64_is_named():
    """Taped eagerly, TensorFlow's ops say "double tensor but is a float
    tensor", not float32: the float64 checks still name the dtype."""
    import tensorflow as tf

    from graders.lib.probes import in_float64
    from m2t.grading.probe import StudentError

    x = tf.constant([1.0, 2.0], tf.float64)
    for f in (
        lambda a: tf.matmul(a[None], tf.ones((2, 1), tf.float32)),
        lambda a: a + tf.ones((2,), tf.float32),
    ):
        with pytest.raises(StudentError, match="float32 meets float64") as e:
            in_float64(f, x)
        assert "name:" not in str(e.value), e.value
