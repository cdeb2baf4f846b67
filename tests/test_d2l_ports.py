"""d2l's own code, ported to the course's API without changing its math,
graded by the real runner: where the book and the course differ, the
message says how, by name.

Each port is the solution with one piece rewritten as d2l writes it, in a
scratch folder, graded in a fresh process by `m2t.grading.runner.grade`
with only the named checks selected. README's convention list is compared
with graders/lib/conventions.py line for line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graders.lib.conventions import CONVENTIONS
from m2t import ROOT
from m2t.authoring.mutants import mutate

GRADE = """
import json, sys
from m2t import curriculum
from m2t.grading import runner

lesson, folder, *names = sys.argv[1:]

class Only:
    def pytest_collection_modifyitems(self, config, items):
        keep = [i for i in items if any(n in i.name for n in names)]
        config.hook.pytest_deselected(
            items=[i for i in items if i not in keep]
        )
        items[:] = keep

(result,) = runner.grade(
    [curriculum.find(lesson)], impl=folder, plugins=[Only()]
)
print(json.dumps({c.name: [c.status, c.message] for c in result.checks}))
"""


def grade_port(
    module: str,
    tmp_path: Path,
    checks: list[str],
    replace: list[tuple[str, str]] = (),
    append: str = "",
) -> dict[str, tuple[str, str]]:
    """Grade the solution of `module` with `replace` made and `append`
    added at its end; {check name: (status, message)} of the checks whose
    names contain one of `checks`."""
    solution = ROOT / "solutions" / f"{module}.py"
    text = mutate(solution.read_text(), list(replace), f"d2l port {module}")
    (tmp_path / solution.name).write_text(text + textwrap.dedent(append))
    done = subprocess.run(
        [sys.executable, "-c", GRADE, module, str(tmp_path), *checks],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results, f"no check of {module} matched {checks}"
    return results


def failures(results: dict) -> dict[str, str]:
    return {n: m for n, (s, m) in results.items() if s != "passed"}


# ---------------------------------------------------------- conventions
def readme_conventions() -> list[tuple[str, str]]:
    """(head, text) of each bullet of README's "Conventions the graders
    fix", continuation lines joined."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Conventions the graders fix", 1)[1]
    section = section.split("\n## ", 1)[0]
    bullets = re.split(r"\n- ", "\n" + section.strip())[1:]
    return [
        tuple(part.strip() for part in " ".join(b.split()).split(":", 1))
        for b in bullets
    ]


def test_readme_conventions_match_the_graders_constants():
    bullets = readme_conventions()
    assert [head for head, _ in bullets] == list(CONVENTIONS), (
        "README's conventions and graders/lib/conventions.py's CONVENTIONS "
        "list different bullets"
    )
    for head, text in bullets:
        want = CONVENTIONS[head]
        for figure in want["figures"]:
            assert figure in text, f"README's {head!r} lacks {figure!r}"
        # the lessons that enforce it: the bullet's last "(lNN, lNN)"
        groups = re.findall(r"\((l\d\d(?:, l\d\d)*)\)", text)
        named = groups[-1].split(", ") if groups else []
        assert named == list(want["lessons"]), (
            f"README's {head!r} names lessons {named}, the graders enforce "
            f"it in {want['lessons']}"
        )


# ---------------------------------------------------------- lesson 20
D2L_ADDNORM = """

class AddNorm(keras.layers.Layer):
    # d2l 10.7.3 (11.7.3): the residual, dropout, then Keras's LayerNorm.
    def __init__(self, dropout, **kwargs):
        super().__init__(**kwargs)
        self.dropout = keras.layers.Dropout(dropout, dtype=self.dtype_policy)
        self.ln = keras.layers.LayerNormalization(dtype=self.dtype_policy)

    def call(self, X, Y, training=None):
        return self.ln(self.dropout(Y, training=training) + X)
"""


def test_d2l_addnorm_is_told_the_epsilon(tmp_path):
    results = grade_port(
        "l20_transformer",
        tmp_path,
        ["test_addnorm_matches_reference"],
        append=D2L_ADDNORM,
    )
    (message,) = failures(results).values()
    assert "Likely mistake [layer_norm_keras_epsilon]" in message, message
    assert "0.001" in message and "epsilon=1e-05" in message, message


def test_d2l_addnorm_with_the_courses_epsilon_passes(tmp_path):
    results = grade_port(
        "l20_transformer",
        tmp_path,
        ["test_addnorm_matches_reference"],
        append=D2L_ADDNORM.replace(
            "LayerNormalization(", "LayerNormalization(epsilon=1e-5, "
        ),
    )
    assert not failures(results), results


def test_d2l_ffn_relu_layer_is_named_in_the_float64_check(tmp_path):
    """d2l's PositionWiseFFN keeps a `ReLU()` layer, made without dtype."""
    results = grade_port(
        "l20_transformer",
        tmp_path,
        ["test_encoder_block_gradient", "test_position_wise_ffn"],
        replace=[
            (
                "        self.dense2 = keras.layers.Dense(\n",
                "        self.relu = keras.layers.ReLU()\n"
                "        self.dense2 = keras.layers.Dense(\n",
            ),
            (
                "return self.dense2(ops.relu(self.dense1(X)))",
                "return self.dense2(self.relu(self.dense1(X)))",
            ),
        ],
    )
    bad = failures(results)
    assert list(bad) == [
        "test_encoder_block_gradient_matches_centred_differences"
    ], results
    (message,) = bad.values()
    assert "ReLU() computes in float32" in message, message
    assert "pass dtype=self.dtype_policy" in message, message


@pytest.mark.parametrize("module", ["l20_transformer"])
def test_the_solution_passes_the_ported_checks(module, tmp_path):
    """The harness itself: the unchanged solution passes the same checks."""
    results = grade_port(
        module,
        tmp_path,
        ["test_addnorm_matches_reference", "test_encoder_block_gradient"],
    )
    assert not failures(results), results


# ---------------------------------------------------------- lesson 07
def test_d2l_sequential_offset_up_to_num_steps_is_caught_on_every_seed(
    tmp_path,
):
    """d2l's seq_data_iter_sequential: offset = random.randint(0, num_steps),
    both ends included."""
    results = grade_port(
        "l07_language_model_data",
        tmp_path,
        ["test_sequential_matches_reference"],
        replace=[
            (
                "offset = int(rng.integers(num_steps))\n    num_tokens",
                "offset = int(rng.integers(0, num_steps, endpoint=True))\n"
                "    num_tokens",
            )
        ],
    )
    bad = failures(results)
    assert len(bad) == len(results) == 3, results
    for message in bad.values():
        assert "Likely mistake [offset_up_to_num_steps]" in message, message
        assert "random.randint(0, num_steps)" in message, message
        assert "[0, num_steps)" in message, message


# ---------------------------------------------------------- lessons 06-18
def expect_book_vs_course(message: str) -> None:
    """A message where the book and the course differ names both."""
    assert re.search(r"d2l\W.+; this course .+ \(why: .+\)", message), message


def test_d2l_masked_softmax_is_told_the_course_wants_zero_rows(tmp_path):
    """d2l 10.3.1 (11.3.1): fill -1e6, softmax, no mask after."""
    results = grade_port(
        "l16_attention_scoring",
        tmp_path,
        ["test_zero_valid_length", "test_masked_weights_are_exactly_zero"],
        append="""

        def masked_softmax(X, valid_lens):
            if valid_lens is None:
                return ops.softmax(X, axis=-1)
            shape = ops.shape(X)
            lens = ops.cast(valid_lens, "int32")
            if len(lens.shape) == 1:
                lens = ops.repeat(lens, shape[1])
            else:
                lens = ops.reshape(lens, (-1,))
            X = ops.reshape(X, (-1, shape[-1]))
            keep = ops.arange(shape[-1], dtype="int32")[None, :] < lens[:, None]
            X = ops.where(keep, X, -1e6)
            return ops.softmax(ops.reshape(X, shape), axis=-1)
        """,
    )
    bad = failures(results)
    # -1e6 is fill enough: without an empty row the weights pass
    assert (
        "test_masked_weights_are_exactly_zero_and_rows_sum_to_one"
        "[valid_lens_B]" not in bad
    ), results
    assert "test_zero_valid_length_gives_all_zero_row" in bad, results
    for message in bad.values():
        assert "Likely mistake [uniform_empty_rows]" in message, message
        expect_book_vs_course(message)


def test_d2l_masked_softmax_in_multi_head_attention(tmp_path):
    """d2l 10.5 (11.5) masks every head with the same fill and no mask
    after the softmax."""
    results = grade_port(
        "l18_multihead_attention",
        tmp_path,
        ["test_masked_softmax_values", "test_masked_weights_are_exactly"],
        append="""

        def masked_softmax(scores, valid_lens):
            if valid_lens is None:
                return ops.softmax(scores, axis=-1)
            lens = ops.cast(valid_lens, "int32")
            if len(lens.shape) == 1:
                lens = lens[:, None, None, None]
            else:
                lens = lens[:, None, :, None]
            keep = ops.arange(ops.shape(scores)[-1], dtype="int32") < lens
            return ops.softmax(ops.where(keep, scores, -1e6), axis=-1)
        """,
    )
    bad = failures(results)
    assert sorted(bad) == [
        "test_masked_softmax_values[valid_lens_BT]",
        "test_masked_weights_are_exactly_zero_and_rows_sum_to_one"
        "[valid_lens_BT]",
    ], results
    for message in bad.values():
        assert "Likely mistake [uniform_empty_rows]" in message, message
        expect_book_vs_course(message)


def test_d2l_lstm_gate_order_is_named(tmp_path):
    """d2l 9.2 (10.1) creates W_xi, W_xf, W_xo, W_xc: a reader slicing the
    course's one (B, 4U) matmul takes the gates in that order."""
    results = grade_port(
        "l11_lstm",
        tmp_path,
        ["test_"],
        replace=[
            (
                "        pre_i, pre_f, pre_c, pre_o = ops.split(pre, 4, axis=-1)"
                "  # 4 x (B, U)\n"
                "        i = ops.sigmoid(pre_i)  # how much of the candidate to "
                "write\n"
                "        f = ops.sigmoid(pre_f)  # how much of the old memory to "
                "keep\n"
                "        c_cand = ops.tanh(pre_c)\n"
                "        o = ops.sigmoid(pre_o)  # how much of the memory to show\n",
                "        I, F, O, C = ops.split(pre, 4, axis=-1)\n"
                "        i, f, o = ops.sigmoid(I), ops.sigmoid(F), ops.sigmoid(O)\n"
                "        c_cand = ops.tanh(C)\n",
            )
        ],
    )
    bad = failures(results)
    assert bad, results
    named = [m for m in bad.values() if "Likely mistake [" in m]
    assert named, bad
    for message in named:
        assert "Likely mistake [gates_in_d2l_order]" in message, message
        expect_book_vs_course(message)


def test_d2l_line_lookup_on_a_plain_dict_is_explained(tmp_path):
    """d2l 9.5.4 (10.5.4): build_array_nmt looks each line up whole."""
    results = grade_port(
        "l13_machine_translation_data",
        tmp_path,
        ["build_array", "go_dot"],
        append="""

        def build_array_nmt(lines, vocab, num_steps):
            lines = [vocab[line] for line in lines]
            lines = [line + [vocab["<eos>"]] for line in lines]
            array = np.array(
                [truncate_pad(line, num_steps, vocab["<pad>"]) for line in lines],
                dtype="int32",
            )
            valid_len = (array != vocab["<pad>"]).astype("int32").sum(1)
            return array, valid_len
        """,
    )
    bad = failures(results)
    assert bad, results
    for message in bad.values():
        assert "unhashable type: 'list'" in message, message
        assert "[vocab[token] for token in line]" in message, message
        expect_book_vs_course(message)


def test_d2l_flat_to_tokens_is_explained(tmp_path):
    """d2l 8.2.3 (9.2.3): to_tokens maps one flat list with int(index)."""
    results = grade_port(
        "l06_text_preprocessing",
        tmp_path,
        ["test_nested_lookups_and_to_tokens"],
        replace=[
            (
                "        if isinstance(indices, (list, tuple)):\n"
                "            return [self.to_tokens(i) for i in indices]\n"
                "        return self.idx_to_token[int(indices)]\n",
                "        if hasattr(indices, '__len__') and len(indices) > 1:\n"
                "            return [self.idx_to_token[int(i)] for i in indices]\n"
                "        return self.idx_to_token[indices]\n",
            )
        ],
    )
    (message,) = failures(results).values()
    assert "TypeError" in message and "nested" in message, message
    expect_book_vs_course(message)


def test_d2l_zh_bleu_on_a_short_prediction_is_explained(tmp_path):
    """d2l-zh 9.7.6: bleu divides by len_pred - n + 1."""
    results = grade_port(
        "l14_seq2seq",
        tmp_path,
        ["test_bleu"],
        append="""

        def bleu(pred_seq, label_seq, k=2):
            pred_tokens, label_tokens = pred_seq.split(" "), label_seq.split(" ")
            len_pred, len_label = len(pred_tokens), len(label_tokens)
            score = math.exp(min(0, 1 - len_label / len_pred))
            for n in range(1, k + 1):
                num_matches, label_subs = 0, collections.defaultdict(int)
                for i in range(len_label - n + 1):
                    label_subs[" ".join(label_tokens[i : i + n])] += 1
                for i in range(len_pred - n + 1):
                    if label_subs[" ".join(pred_tokens[i : i + n])] > 0:
                        num_matches += 1
                        label_subs[" ".join(pred_tokens[i : i + n])] -= 1
                score *= math.pow(
                    num_matches / (len_pred - n + 1), math.pow(0.5, n)
                )
            return score
        """,
    )
    assert list(failures(results)) == ["test_bleu[too_short]"], results
    (message,) = failures(results).values()
    assert "ZeroDivisionError" in message and "0.0" in message, message
    expect_book_vs_course(message)


BOOK_LESSONS = [
    "l06_text_preprocessing",
    "l07_language_model_data",
    "l11_lstm",
    "l13_machine_translation_data",
    "l14_seq2seq",
    "l16_attention_scoring",
    "l18_multihead_attention",
    "l20_transformer",
]


def test_every_book_vs_course_message_names_both_conventions():
    """Every message graders make with book_vs_course, and every known
    mistake that names d2l, says what d2l does and what the course
    requires, each in its own words, and why."""
    import importlib

    from graders.lib import conventions
    from graders.lib.judge import Mistake

    d2l_mistakes = []
    for module in BOOK_LESSONS:
        grader = importlib.import_module(f"graders.test_{module}")
        d2l_mistakes += [
            m.explanation
            for m in vars(grader).values()
            # "d2l's 28 types" cites a figure where the book agrees
            if isinstance(m, Mistake)
            and re.search(r"\bd2l\b(?!'s \d)", m.explanation)
        ]
    messages = set(conventions.BOOK_VS_COURSE)
    assert len(messages) >= 7, messages
    assert set(d2l_mistakes) <= messages, set(d2l_mistakes) - messages
    for message in messages:
        expect_book_vs_course(message)
        book = message.split(": d2l", 1)[1].split("; this course", 1)[0]
        course = message.split("; this course", 1)[1].split("(why:", 1)[0]
        assert book.strip() != course.strip(), message


def test_d2l_dot_product_attention_float32_cast_is_named(tmp_path):
    """d2l 10.3.2 (11.3.2): scores / tf.math.sqrt(tf.cast(d, tf.float32))."""
    results = grade_port(
        "l16_attention_scoring",
        tmp_path,
        ["test_gradient_matches_centred_differences"],
        replace=[
            (
                "d = ops.cast(ops.shape(queries)[-1], queries.dtype)",
                "d = tf.cast(queries.shape[-1], dtype=tf.float32)",
            ),
            (
                "ops.swapaxes(keys, -1, -2)) / ops.sqrt(d)",
                "ops.swapaxes(keys, -1, -2)) / tf.math.sqrt(d)",
            ),
            ("import keras\n", "import keras\nimport tensorflow as tf\n"),
        ],
    )
    bad = failures(results)
    assert list(bad) == ["test_gradient_matches_centred_differences[dot]"], (
        results
    )
    (message,) = bad.values()
    assert "float32 meets float64" in message, message
    assert "tf.cast(d, dtype=tf.float32)" in message, message


def test_in_float64_names_float32_and_lets_other_errors_through():
    import tensorflow as tf

    from graders.lib.probes import in_float64
    from m2t.grading.probe import StudentError

    x = tf.constant([1.0, 2.0], tf.float64)
    with pytest.raises(StudentError, match="float32 meets float64"):
        in_float64(lambda a: a / tf.cast(2, tf.float32), x)
    with pytest.raises(TypeError, match="not float"):
        in_float64(lambda a: (_ for _ in ()).throw(TypeError("not float")), x)
    assert float(in_float64(lambda a: tf.reduce_sum(a), x)) == 3.0


# ---------------------------------------------------------- lessons 02-03
# d2l's networks compute the course's functions with other nesting: a
# Sequential head, GlobalAvgPool2D + Reshape + Flatten, ResNet stages as a
# Layer of their own. The table checks compare them leaf by leaf.
D2L_VGG = """

def vgg(conv_arch=VGG11, num_classes=10, num_hiddens=4096, dropout=0.5):
    # d2l 7.2.2 (8.2.2): the blocks, then the head as one more Sequential.
    net = keras.Sequential()
    for num_convs, num_channels in conv_arch:
        net.add(vgg_block(num_convs, num_channels))
    net.add(
        keras.Sequential(
            [
                keras.layers.Flatten(),
                keras.layers.Dense(num_hiddens, activation="relu"),
                keras.layers.Dropout(dropout),
                keras.layers.Dense(num_hiddens, activation="relu"),
                keras.layers.Dropout(dropout),
                keras.layers.Dense(num_classes),
            ]
        )
    )
    return net
"""

D2L_ZH_NIN = """

def nin_block(num_channels, kernel_size, strides, padding):
    # d2l-zh 7.3.1: each ReLU an Activation layer of its own.
    return keras.Sequential(
        [
            keras.layers.Conv2D(num_channels, kernel_size, strides=strides,
                                padding=padding),
            keras.layers.Activation("relu"),
            keras.layers.Conv2D(num_channels, kernel_size=1),
            keras.layers.Activation("relu"),
            keras.layers.Conv2D(num_channels, kernel_size=1),
            keras.layers.Activation("relu"),
        ]
    )


def nin(num_classes=10, widths=(96, 256, 384), dropout=0.5):
    # d2l-zh 7.3.2: the average per channel, Reshape to (1, 1, classes),
    # then Flatten back to (B, classes).
    return keras.Sequential(
        [
            nin_block(widths[0], kernel_size=11, strides=4, padding="valid"),
            keras.layers.MaxPool2D(pool_size=3, strides=2),
            nin_block(widths[1], kernel_size=5, strides=1, padding="same"),
            keras.layers.MaxPool2D(pool_size=3, strides=2),
            nin_block(widths[2], kernel_size=3, strides=1, padding="same"),
            keras.layers.MaxPool2D(pool_size=3, strides=2),
            keras.layers.Dropout(dropout),
            nin_block(num_classes, kernel_size=3, strides=1, padding="same"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Reshape((1, 1, num_classes)),
            keras.layers.Flatten(),
        ]
    )
"""

D2L_ZH_RESNET = """

class ResnetBlock(keras.layers.Layer):
    # d2l-zh 7.6.2: a stage is a Layer holding its residual blocks.
    def __init__(self, num_channels, num_residuals, first_block=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.residual_layers = []
        for i in range(num_residuals):
            if i == 0 and not first_block:
                self.residual_layers.append(
                    Residual(num_channels, use_1x1conv=True, strides=2)
                )
            else:
                self.residual_layers.append(Residual(num_channels))

    def call(self, X, training=None):
        for layer in self.residual_layers:
            X = layer(X, training=training)
        return X


def resnet18(num_classes=10, widths=(64, 128, 256, 512)):
    # d2l-zh 7.6.3: b1's four layers straight in the model, then the stages.
    return keras.Sequential(
        [
            keras.layers.Conv2D(widths[0], kernel_size=7, strides=2,
                                padding="same"),
            keras.layers.BatchNormalization(),
            keras.layers.Activation("relu"),
            keras.layers.MaxPool2D(pool_size=3, strides=2, padding="same"),
            ResnetBlock(widths[0], 2, first_block=True),
            ResnetBlock(widths[1], 2),
            ResnetBlock(widths[2], 2),
            ResnetBlock(widths[3], 2),
            keras.layers.GlobalAvgPool2D(),
            keras.layers.Dense(units=num_classes),
        ]
    )
"""

D2L_EN_RESNET = """

def resnet18(num_classes=10, widths=(64, 128, 256, 512)):
    # d2l 8.6.3: b1, one Sequential per stage, the head as a Sequential.
    net = keras.Sequential(
        [
            keras.Sequential(
                [
                    keras.layers.Conv2D(widths[0], kernel_size=7, strides=2,
                                        padding="same"),
                    keras.layers.BatchNormalization(),
                    keras.layers.Activation("relu"),
                    keras.layers.MaxPool2D(pool_size=3, strides=2,
                                           padding="same"),
                ]
            )
        ]
    )
    for i, channels in enumerate(widths):
        net.add(resnet_block(channels, 2, first_block=i == 0))
    net.add(
        keras.Sequential(
            [
                keras.layers.GlobalAvgPool2D(),
                keras.layers.Dense(units=num_classes),
            ]
        )
    )
    return net
"""

D2L_GOOGLENET_B5 = (
    "            layers.GlobalAveragePooling2D(),\n        ]\n    )\n"
    "    return keras.Sequential([b1, b2, b3, b4, b5,",
    "            layers.GlobalAveragePooling2D(),\n"
    "            layers.Flatten(),\n        ]\n    )\n"
    "    return keras.Sequential([b1, b2, b3, b4, b5,",
)


@pytest.mark.parametrize(
    ("module", "port", "checks"),
    [
        ("l02_classic_cnns", D2L_VGG, ["[vgg]"]),
        ("l02_classic_cnns", D2L_ZH_NIN, ["[nin]", "nin_block"]),
        ("l03_inception_resnet", D2L_ZH_RESNET, ["resnet18"]),
        ("l03_inception_resnet", D2L_EN_RESNET, ["resnet18"]),
    ],
    ids=["d2l_vgg", "d2l_zh_nin", "d2l_zh_resnet", "d2l_en_resnet"],
)
def test_d2l_cnn_nesting_passes_the_table_checks(
    module, port, checks, tmp_path
):
    results = grade_port(module, tmp_path, checks, append=port)
    assert any("table" in name for name in results), results
    assert not failures(results), results


def test_d2l_googlenet_flatten_after_the_average_passes(tmp_path):
    """d2l 8.4.2 (7.4.2): b5 ends in GlobalAvgPool2D, then Flatten."""
    results = grade_port(
        "l03_inception_resnet",
        tmp_path,
        ["googlenet"],
        replace=[D2L_GOOGLENET_B5],
    )
    assert "test_googlenet_seed_layer_table" in results, results
    assert not failures(results), results


def test_d2l_zh_resnet_stage_that_downsamples_is_named(tmp_path):
    """Opened leaf by leaf, a wrong stage is still a known mistake."""
    port = D2L_ZH_RESNET.replace(
        "ResnetBlock(widths[0], 2, first_block=True)",
        "ResnetBlock(widths[0], 2)",
    )
    results = grade_port(
        "l03_inception_resnet",
        tmp_path,
        ["test_resnet18_seed_layer_table"],
        append=port,
    )
    (message,) = failures(results).values()
    assert "Likely mistake [resnet_first_stage_downsamples]" in message
    assert "leaf by leaf" in message, message


# ---------------------------------------------------------- lesson 18
D2L_RESHAPE_MASKED_SOFTMAX = """

def masked_softmax(scores, valid_lens=None):
    # d2l 10.3.1 (11.3.1), each head's rows folded into the batch:
    # tf.reshape(valid_lens, shape=-1), a scalar shape, runs eagerly only.
    if valid_lens is None:
        return tf.nn.softmax(scores, axis=-1)
    shape = tf.shape(scores)
    heads, steps, keys = scores.shape[1], scores.shape[2], scores.shape[3]
    if len(valid_lens.shape) == 1:
        valid_lens = tf.repeat(valid_lens, repeats=heads * steps)
    else:
        valid_lens = tf.repeat(valid_lens[:, None, :], heads, axis=1)
        valid_lens = tf.reshape(valid_lens, shape=-1)
    X = tf.reshape(scores, shape=(-1, keys))
    mask = tf.range(keys, dtype=tf.float32)[None, :] < tf.cast(
        valid_lens[:, None], dtype=tf.float32
    )
    X = tf.where(mask, X, -1e6)
    X = tf.nn.softmax(tf.reshape(X, shape=shape), axis=-1)
    return X * tf.cast(tf.reshape(mask, shape), X.dtype)
"""


def test_d2l_scalar_reshape_under_tf_function_names_the_line(tmp_path):
    """d2l's `tf.reshape(valid_lens, shape=-1)` passes eagerly and fails in
    the gradient check's tf.function: the message carries TensorFlow's
    error and the student's line, not "in user code:", and says what to
    write instead."""
    results = grade_port(
        "l18_multihead_attention",
        tmp_path,
        ["test_masked_softmax_values", "test_gradient"],
        replace=[("import keras\n", "import keras\nimport tensorflow as tf\n")],
        append=D2L_RESHAPE_MASKED_SOFTMAX,
    )
    bad = failures(results)
    assert list(bad) == ["test_gradient_matches_centred_differences"], results
    (message,) = bad.values()
    assert "Shape must be rank 1 but is rank 0" in message, message
    assert "tf.reshape(valid_lens, shape=-1)" in message, message
    assert "shape=(-1,)" in message, message
    assert "{{node" not in message and "in user code" not in message, message


def test_leaf_table_merges_flatten_and_reshape_runs():
    from graders.lib.cnn_judge import leaf_table

    gap = ("GlobalAveragePooling2D", (1, 10))
    # d2l-zh's NiN: the average, Reshape((1, 1, 10)), Flatten: no change
    assert leaf_table(
        [gap, ("Reshape", (1, 1, 1, 10)), ("Flatten", (1, 10))], (1, 5, 5, 10)
    ) == [gap]
    pool = ("MaxPooling2D", (1, 5, 5, 256))
    dense = ("Dense", (1, 10))
    # a Reshape to flat is a Flatten; one that stays 3-D is a Reshape
    assert leaf_table([pool, ("Reshape", (1, 6400)), dense], (1, 9, 9, 1)) == [
        pool,
        ("Flatten", (1, 6400)),
        dense,
    ]
    assert leaf_table([pool, ("Reshape", (1, 25, 256))], (1, 9, 9, 1)) == [
        pool,
        ("Reshape", (1, 25, 256)),
    ]
