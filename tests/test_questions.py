"""The question list: the bank and its key agree, every seed question is
there, the reference answers pass, the empty template scores 0, and each
kind of answer accepts the equivalent forms and rejects wrong ones."""

import json
import math

import numpy as np
import pytest

from m2t import ROOT
from m2t import cli
from m2t import curriculum
from m2t import i18n
from m2t import questions as Q
from m2t.questions import experiments as X

BANK = Q.bank()
KEY = Q.load_key()

# The 16 questions of study notes 000, by number, and where they live.
SEED_IDS = {
    1: "q20_1",  # which layers make up the Transformer
    2: "q20_2",  # the role of self-attention
    3: "q20_3",  # where self-attention sits
    4: "q20_4",  # which components use attention
    5: "q16_1",  # what additive attention computes
    6: "q16_2",  # sizes of q and k, additive vs dot product
    7: "q18_5",  # how multi-head attention balances its heads (open)
    8: "q18_6",  # heads vs CNN channels
    9: "q19_5",  # a fixed length limit for self-attention?
    10: "q19_6",  # typical training length
    11: "q19_7",  # how far long-range dependencies reach
    12: "q19_9",  # neighbouring positional encodings and sampling
    13: "q19_1",  # time complexity of self-attention
    14: "q02_4",  # TPU vs GPU (open)
    15: "q20_5",  # still learning W? (open)
    16: "q18_1",  # do heads share W_q, W_k, W_v?
}


def question(kind, **fields):
    options = fields.pop("options", 4 if "of" in kind else 0)
    return Q.Question(
        id="q99_1",
        lesson="99",
        kind=kind,
        points=1,
        en="en",
        zh="zh",
        options=tuple(Q.Option(f"o{i}", f"o{i}") for i in range(options)),
        **fields,
    )


def verdict(q, answer, key=None, expected=None, **table):
    table = {"answer": answer, **table} if answer is not None else table
    return Q.judge(q, table, key, expected)


# ------------------------------------------------------------ the bank
def test_bank_and_key_are_consistent():
    assert Q.problems(experiments=Q.EXPERIMENTS) == []


@pytest.mark.parametrize(
    "seed", sorted(SEED_IDS), ids=lambda s: f"seed_{s:02d}"
)
def test_every_seed_question_is_in_the_bank(seed):
    qid = SEED_IDS[seed]
    assert qid in BANK, f"seed question {seed} ({qid}) is missing"
    assert BANK[qid].seed == seed
    assert KEY[qid].explanation_en and KEY[qid].explanation_zh
    assert [q.id for q in BANK.values() if q.seed == seed] == [qid]


def test_every_lesson_has_questions():
    lessons = {q.lesson for q in BANK.values()}
    numbered = {x.id for x in curriculum.lessons() if not x.is_question_list}
    assert lessons == numbered
    for lesson in lessons:
        extra = [
            q for q in BANK.values() if q.lesson == lesson and q.seed is None
        ]
        assert 2 <= len(extra) <= 4, lesson


def test_open_questions_take_free_text_and_defensible_sets():
    open_ids = {q.id for q in BANK.values() if q.open}
    assert open_ids == {"q02_4", "q18_5", "q20_5"}
    for qid in open_ids:
        assert BANK[qid].free_text and BANK[qid].kind == "several_of"
        assert set(KEY[qid].defensible) < set(BANK[qid].letters)


def test_the_template_is_up_to_date():
    assert Q.stale() == []


# ------------------------------------------- the key against references
REFERENCE = Q.read_answers(ROOT / "solutions" / "answers.toml")


@pytest.mark.parametrize("qid", list(BANK))
def test_reference_answers_pass(qid):
    q = BANK[qid]
    v = Q.judge(q, REFERENCE.tables[qid], KEY[qid], Q.expected_value(q))
    assert v.status == "correct", v.message


def test_the_empty_template_scores_zero():
    template = Q.read_answers(Q.TEMPLATE)
    assert not template.errors and template.syntax_error is None
    statuses = {
        Q.judge(q, template.tables.get(q.id), KEY[q.id], 0.0).status
        for q in BANK.values()
    }
    assert statuses == {"not_answered"}


def test_experiment_references_agree_with_independent_computations():
    # PE: the closed form (2/d) sum_j cos(delta w_j), independent of i.
    d = 32
    w = 1 / 10000 ** (2 * np.arange(d // 2) / d)
    closed = (2 / d) * np.cos(w).sum()
    assert X.pe_cosine(32, 10, 1) == pytest.approx(closed, abs=1e-12)
    assert X.pe_cosine(32, 0, 1) == pytest.approx(closed, abs=1e-12)
    assert X.pe_cosine(32, 10, 20) < closed
    # Perplexity: 2 ** mean(bits).
    assert X.perplexity([0.5, 0.25, 0.125, 0.5]) == pytest.approx(2**1.75)
    # BLEU by hand: brevity exp(1 - 6/5), p1 = 1, p2 = 3/4.
    assert X.bleu(
        "the cat on the mat", "the cat sat on the mat", 2
    ) == pytest.approx(math.exp(-0.2) * 0.75**0.25)
    assert X.bleu("a b c", "a b c", 2) == pytest.approx(1.0)
    assert X.grad_clipping([[3.0, 0.0], [0.0, 4.0]], 1.0, [1, 1]) == (
        pytest.approx(0.8)
    )
    assert X.grad_clipping([[0.3], [0.4]], 1.0, [1, 0]) == 0.4
    assert X.attention_weights_exponent(1024, 2048) == 2.0
    assert X.dot_product_variance(64) == 64
    q, k = np.random.default_rng(0).standard_normal((2, 20000, 64))
    assert np.var(np.sum(q * k, axis=1)) == pytest.approx(64, rel=0.05)


def _beam_numbers(text):
    """(L, sum log P) of each candidate and the alphas, read from the text."""
    import re

    candidates = [
        (int(length), float(logp))
        for length, logp in re.findall(
            r"L = (\d+)[^;]*?(?:sum log P|Σ log P) = (-?\d+(?:\.\d+)?)", text
        )
    ]
    alphas = [
        float(a) for a in re.findall(r"(?:alpha|α) = (\d+(?:\.\d+)?)", text)
    ]
    return candidates, sorted(set(alphas))


def test_beam_search_key_follows_the_length_penalty():
    import re

    q, k = BANK["q14_1"], KEY["q14_1"]
    candidates, alphas = _beam_numbers(q.en)
    assert (candidates, alphas) == _beam_numbers(q.zh)  # one question
    assert len(candidates) == 2 and len(alphas) == 2

    def winner(alpha):
        scores = [logp / length**alpha for length, logp in candidates]
        return 1 + scores.index(max(scores))

    chosen = tuple(winner(a) for a in alphas)
    # The option that says so, read from the option's own text.
    said = {}
    for letter, option in zip(q.letters, q.options, strict=True):
        both = re.fullmatch(r"Candidate (\d) in both cases\.", option.en)
        if both:
            said[letter] = (int(both[1]),) * 2
        else:
            pair = re.findall(r"andidate (\d) with alpha", option.en)
            said[letter] = tuple(int(c) for c in pair)
    assert [said[k.answer]] == [chosen]
    # "Work to three decimals: rounded to two, the scores tie."
    at = [logp / length ** alphas[1] for length, logp in candidates]
    assert "three decimals" in q.en and "三位小数" in q.zh
    assert round(at[0], 2) == round(at[1], 2)
    assert round(at[0], 3) != round(at[1], 3)


def test_masked_softmax_key_names_this_courses_convention():
    # q16_5 D: a row of valid length 0 is all zeros in this course's
    # masked_softmax, uniform in d2l's (fill only) and in Keras's fused path.
    keras = pytest.importorskip("keras")
    from solutions.l16_attention_scoring import masked_softmax

    q, k = BANK["q16_5"], KEY["q16_5"]
    assert "this course's masked_softmax" in q.en and "本课程" in q.zh
    X = np.random.default_rng(0).standard_normal((1, 2, 4)).astype("float32")
    ours = np.asarray(masked_softmax(X, np.array([[0, 4]])))
    assert np.all(ours[0, 0] == 0) and ours[0, 1].sum() == pytest.approx(1)
    filled = np.where(np.arange(4) < 0, X, -1e6)  # d2l: fill, then softmax
    d2l = np.asarray(keras.ops.softmax(filled, axis=-1))
    assert d2l[0, 0] == pytest.approx(np.full(4, 0.25))
    v = np.random.default_rng(1).standard_normal((1, 4, 1, 8)).astype("float32")
    mask = np.zeros((1, 1, 4, 4), bool)
    fused = np.asarray(keras.ops.dot_product_attention(v, v, v, mask=mask))
    assert fused[0, 0, 0] == pytest.approx(v[0, :, 0].mean(0), abs=1e-5)
    assert "D" not in k.answer  # the course's convention decides
    assert "d2l" in k.explanation_en and "dot_product_attention" in (
        k.explanation_en
    )


def test_attention_weights_exponent_is_the_same_on_every_device():
    # q19_4 grades the count of the weights, which no hardware changes.
    keras = pytest.importorskip("keras")
    from solutions.l16_attention_scoring import DotProductAttention

    q = BANK["q19_4"]
    n1, n2 = q.params["n1"], q.params["n2"]
    attention = DotProductAttention()

    def count(n):
        x = np.zeros((1, n, 64), "float32")
        with keras.device("cpu"):
            _, weights = attention(x, x, x, return_attention_weights=True)
        return int(np.prod(weights.shape))

    measured = math.log2(count(n2) / count(n1))
    v = verdict(q, measured, None, Q.expected_value(q))
    assert v.status == "correct", v.message
    for launch_bound in (0.3, 1.0):  # what an accelerator's timing gives
        assert verdict(q, launch_bound, None, 2.0).status == "wrong"
    assert q.free_text and "not graded" in q.en


def test_bidirectional_key_twice_the_computation_not_twice_the_time():
    # q12_3: D (twice the computation) true, E (twice the time) false.
    keras = pytest.importorskip("keras")
    layers = keras.layers
    one = layers.GRU(16)
    two = layers.Bidirectional(layers.GRU(16))
    one.build((None, None, 5))
    two.build((None, None, 5))
    assert two.count_params() == 2 * one.count_params()
    q, k = BANK["q12_3"], KEY["q12_3"]
    letters = dict(zip(q.letters, q.options, strict=True))
    assert "computation" in letters["D"].en and "time" in letters["E"].en
    assert "D" in k.answer and "E" not in k.answer


def test_transformer_key_names_the_components_that_use_attention():
    # q20_4: walk the course's Transformer and find its attention layers.
    keras = pytest.importorskip("keras")
    from solutions import l20_transformer as T

    def attention_layers(layer, path=""):
        for name, value in vars(layer).items():
            if name.startswith("_"):  # Keras's own tracking lists
                continue
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                where = f"{path}{name}" + (f"[{i}]" if value is items else "")
                if isinstance(item, keras.layers.MultiHeadAttention):
                    yield where
                elif isinstance(item, keras.layers.Layer) and item is not layer:
                    yield from attention_layers(item, where + ".")

    encoder = T.TransformerEncoder(10, 8, 16, 2, num_blks=2)
    decoder = T.TransformerDecoder(10, 8, 16, 2, num_blks=3)
    found = list(attention_layers(encoder)) + list(attention_layers(decoder))
    roles = sorted({w.rsplit(".", 1)[-1] for w in found})
    assert len(found) == 2 * 1 + 3 * 2  # the count the explanation gives
    assert roles == ["attention", "cross_attention", "self_attention"]
    assert not any("ffn" in w or "addnorm" in w for w in found)
    q, k = BANK["q20_4"], KEY["q20_4"]
    assert q.kind == "several_of" and tuple(k.answer) == ("A", "B", "C")
    named = " ".join(q.options[ord(c) - 65].en for c in k.answer)
    assert "self-attention" in named and "encoder-decoder" in named
    assert "2 x 1 + 3 x 2 = 8" in k.explanation_en


def test_keras_agrees_with_the_keys():
    keras = pytest.importorskip("keras")
    layers = keras.layers

    def count(layer, shape):
        layer.build(shape)
        return layer.count_params()

    rnn = count(layers.SimpleRNN(256), (None, None, 28))
    gru = count(layers.GRU(256, reset_after=False), (None, None, 28))
    lstm = count(layers.LSTM(256), (None, None, 28))
    assert (rnn, gru, lstm) == (
        KEY["q09_1"].answer,
        KEY["q10_3"].answer,
        KEY["q11_2"].answer,
    )
    mlp = keras.Sequential(
        [keras.Input((784,)), layers.Dense(256, "relu"), layers.Dense(10)]
    )
    assert mlp.count_params() == KEY["q01_2"].answer
    assert 25088 * 4096 + 4096 == KEY["q02_2"].answer

    conv = layers.Conv2D(96, 11, strides=4, padding="valid")
    assert conv.compute_output_shape((1, 224, 224, 1)) == tuple(
        KEY["q02_1"].answer
    )
    x = np.zeros((4, 6, 6, 3), "float32")
    y = layers.Conv2D(6, 3, strides=2, padding="same")(x)
    y = layers.Conv2D(6, 3, padding="same")(y)
    shortcut = layers.Conv2D(6, 1, strides=2)(x)
    assert tuple((y + shortcut).shape) == tuple(KEY["q03_3"].answer)
    bi = layers.Bidirectional(layers.GRU(16, return_sequences=True))
    out = bi(np.zeros((4, 7, 5), "float32"))
    assert tuple(out.shape) == tuple(KEY["q12_2"].answer)

    mha = layers.MultiHeadAttention(5, key_dim=20, use_bias=False)
    _, scores = mha(
        np.zeros((2, 4, 100), "float32"),
        np.zeros((2, 6, 100), "float32"),
        return_attention_scores=True,
    )
    assert tuple(scores.shape) == tuple(KEY["q18_4"].answer)
    assert mha.count_params() == X.mha_parameters(100, 5, 100, 100, 100)

    norm = layers.LayerNormalization()  # epsilon 1e-3, gamma 1, beta 0
    x = np.array([[1, 2, 3], [3, 5, 7]], "float32")
    assert float(norm(x)[1, 0]) == pytest.approx(
        X.layer_norm(x.tolist(), 1, 0, 1e-3), abs=1e-5
    )


# ------------------------------------------ each kind: accept and reject
@pytest.mark.parametrize(
    "kind, key, equivalent, wrong, malformed",
    [
        (
            "one_of",
            "B",
            ["B", "b", " (b) ", "B.", ["B"], "Ｂ"],
            ["A", "d"],
            ["E", "A, B", 2, "maybe"],
        ),
        (
            "several_of",
            ["A", "C"],
            ["A, C", "a,c", "c a", "AC", ["C", "A"], "A、C", "A & C"],
            ["A", "A, B, C", ["B", "D"]],
            ["A, E", "A; X", [1, 2]],
        ),
        (
            "shape",
            [2, 3, 4],
            ["(2, 3, 4)", "2x3x4", [2, 3, 4], "2 × 3 × 4", "[2,3,4]", "2*3*4"],
            ["(2, 4, 3)", [2, 3], "(2, 3, 4, 1)"],
            [
                "(2, 3.5, 4)",
                "(2, -3, 4)",
                "2 by 3 by 4",
                "(B, T, D)",
                "((2, 3, 4))",
                7,
            ],
        ),
        (
            "expression",
            "O(n^2 d)",
            [
                "O(n^2 d)",
                "O(d n^2)",
                "O(n²d)",
                "O(n^2*d)",
                "n*n*d",
                "O(N^2 D)",
                "Θ(n² d)",
                "O(2 n^2 d + n^2)",
                "O（n^2 d）",
            ],
            ["O(n d^2)", "O(n^2)", "O(n^2 d + n d^2)", "O(n d)"],
            ["O(n^2 - d)", "O(n^", "", 3],
        ),
        (
            "number",
            0.75,
            [0.75, "0.75", "3/4", "7.5e-1", 0.7505],
            [0.76, "0.7", -0.75],
            ["3,4", "75%", "three quarters", True],
        ),
    ],
)
def test_each_kind_accepts_equivalent_forms_and_rejects_wrong_ones(
    kind, key, equivalent, wrong, malformed
):
    q = question(kind, tolerance=0.001 if kind == "number" else 0.0)
    k = Q.Key(q.id, answer=key)
    for answer in equivalent:
        v = verdict(q, answer, k)
        assert v.status == "correct", (answer, v.message)
    for answer in wrong:
        v = verdict(q, answer, k)
        assert v.status == "wrong", (answer, v.message)
        assert "reads as" in v.message
    for answer in malformed:
        v = verdict(q, answer, k)
        if answer == "":
            assert v.status == "not_answered"
            continue
        assert v.status == "malformed", (answer, v.message)
        assert "expected" in v.message


def test_experiments_are_judged_against_the_computed_value_without_a_key():
    q = BANK["q19_8"]
    value = Q.expected_value(q)
    assert verdict(q, round(value, 4), None, value).status == "correct"
    assert verdict(q, f"{value:.3f}", None, value).status == "correct"
    assert verdict(q, 0.90, None, value).status == "wrong"
    assert verdict(q, 1.0, None, value).status == "wrong"
    q = BANK["q16_3"]  # a relative tolerance: measured estimates pass
    assert verdict(q, 61.0, None, 64.0).status == "correct"
    assert verdict(q, 8.0, None, 64.0).status == "wrong"  # the std, not var


def test_a_number_range_accepts_any_value_inside():
    q, k = BANK["q19_6"], KEY["q19_6"]
    for answer in (512, 1024, "2048", 1000, 4096, 8192):
        assert verdict(q, answer, k).status == "correct"
    for answer in (64, 128, 100_000):
        assert verdict(q, answer, k).status == "wrong"


def test_open_questions_pass_any_defensible_set_and_record_free_text():
    q, k = BANK["q18_5"], KEY["q18_5"]
    assert verdict(q, "A", k).status == "correct"
    assert verdict(q, "A, B, C", k, text="W_o mixes").text == "W_o mixes"
    wrong = verdict(q, "A, D", k)
    assert wrong.status == "wrong" and "not defensible" in wrong.message
    only_text = verdict(q, None, k, text="my view")
    assert only_text.status == "recorded"
    assert verdict(q, "", k, text="  ").status == "not_answered"


def test_without_the_key_answers_are_recorded_for_the_instructor():
    v = verdict(BANK["q16_2"], "b", None)
    assert v.status == "ungraded"
    assert "graded by your instructor" in v.message and "(B)" in v.message
    assert verdict(BANK["q16_2"], "Z", None).status == "malformed"


def test_unknown_keys_in_a_table_are_an_error():
    v = Q.judge(BANK["q16_2"], {"anwser": "B"}, KEY["q16_2"])
    assert v.status == "malformed" and "'anwser'" in v.message


# ------------------------------------------------------ the answers file
def test_a_toml_error_costs_only_its_question(tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text(
        "# my answers\n"
        "[q16_2]\n"
        'answer = "B"\n'
        "\n"
        "[q16_4]\n"
        "answer = (2, 3, 6)\n"  # line 6: not TOML
        "\n"
        "[q19_1]\n"
        'answer = "O(n^2 d)"  # a comment\n'
        "[q16_2]\n"  # line 10: declared twice
        'answer = "A"\n',
        encoding="utf-8",
    )
    file = Q.read_answers(path)
    assert file.syntax_error and "line" in file.syntax_error
    assert "line 6, column" in file.errors["q16_4"]
    assert "declared twice" in file.errors["q16_2"]
    assert "line 10" in file.errors["q16_2"]
    v = Q.judge(BANK["q19_1"], file.tables["q19_1"], KEY["q19_1"])
    assert v.status == "correct"


def test_top_level_answers_and_a_missing_file(tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text('q16_2 = "B"\n[q16_4]\nanswer = [2, 3, 6]\n')
    file = Q.read_answers(path)
    assert file.tables["q16_2"] == {"answer": "B"}
    assert Q.judge(
        BANK["q16_4"], file.tables["q16_4"], KEY["q16_4"]
    ).status == ("correct")
    assert not Q.read_answers(tmp_path / "nothing.toml").exists


# ------------------------------------------------------------ the CLI
def test_answers_template_check_fails_when_stale(tmp_path, capsys):
    path = tmp_path / "answers.toml"
    assert cli.main(["answers-template", "--check", "--output", str(path)]) == 1
    assert cli.main(["answers-template", "--output", str(path)]) == 0
    assert cli.main(["answers-template", "--check", "--output", str(path)]) == 0
    path.write_text(path.read_text().replace('answer = ""', 'answer = "A"', 1))
    assert cli.main(["answers-template", "--check", "--output", str(path)]) == 1
    assert cli.main(["answers-template", "--output", str(path)]) == 2  # kept
    assert 'answer = "A"' in path.read_text()
    assert "is stale" in capsys.readouterr().err


def test_explain_shows_the_explanations_of_correct_answers(capsys):
    assert cli.main(["explain", "q16_2", "--impl", "solutions"]) == 0
    out = capsys.readouterr().out
    assert "q16_2" in out and "bilinear" in out
    assert cli.main(["explain", "q16_2"]) == 0  # the empty template
    assert "answer correctly first" in capsys.readouterr().out


@pytest.mark.parametrize("spelling", ["Q16_2", " q16_2 ", "16_2"])
def test_explain_reads_an_id_as_the_bank_writes_it(capsys, spelling):
    assert cli.main(["explain", spelling, "--impl", "solutions"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("q16_2 (") and "bilinear" in out, out
    assert "Q16_2" not in out  # the bank's id, not the one typed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_names_a_wrong_id_and_the_nearest(capsys, lang):
    # one right id beside a wrong one: the wrong one is not passed over
    with i18n.using(lang):
        assert cli.main(["explain", "q16_2", "Q16_9"]) == 2
    err = capsys.readouterr().err
    assert "ID" in err and "'Q16_9'" in err, err  # the argument, the value
    nearest = err.rsplit(":", 1)[-1] if lang == "en" else err
    for qid in ("q16_1", "q16_2"):
        assert qid in nearest, err
    assert "q01_1" not in err, err  # the nearest ids, not all of them


def test_grade_questions_end_to_end(m2t, tmp_path):
    report = tmp_path / "results.json"
    result = m2t(
        "grade", "questions", "--impl", "solutions", "--report", str(report)
    )
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(report.read_text())
    assert len(data["tests"]) == len(BANK)
    assert (
        data["score"]
        == data["max_score"]
        == sum(q.points for q in BANK.values())
    )

    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "answers.toml").write_text(
        '[q16_2]\nanswer = "b"\n\n[q16_4]\nanswer = (2, 3, 6)\n\n'
        '[q19_1]\nanswer = "O(n d^2)"\n\n[q18_5]\ntext = "my view"\n',
        encoding="utf-8",
    )
    result = m2t(
        "grade",
        "questions",
        "--unconfined",
        "--impl",
        str(submission),
        "--report",
        str(report),
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    tests = {
        t["name"].split("[")[-1].rstrip("]"): t
        for t in json.loads(report.read_text())["tests"]
    }
    assert tests["q16_2"]["status"] == "passed"
    assert "line 5, column" in tests["q16_4"]["output"]
    assert "reads as O(d^2 n)" in tests["q19_1"]["output"]
    assert "not answered" in tests["q01_1"]["output"]
    # Text alone leaves a free-text question's points in the maximum.
    data = json.loads(report.read_text())
    assert data["max_score"] == sum(q.points for q in BANK.values())
    assert "choose letters too" in tests["q18_5"]["output"]
    # The unanswered questions are one count line, not one line each.
    waiting = len(BANK) - 3  # q16_2, q19_1 answered; q16_4 an error
    out = result.stdout
    assert out.count("not answered") == 1, out
    assert f"[todo] {waiting} of {len(BANK)} questions not answered yet" in out


# ------------------------------------------- bounded, whatever the input
@pytest.mark.parametrize(
    "answer, says",
    [
        ("(a+b+c+d)^40", "exponent"),
        ("(a+b+c+d)^8", "terms"),
        ("(a+b)(c+d)(e+f)(g+h)(i+j)(k+l)(m+o)", "terms"),
        (
            "(" + "+".join("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN") + ")^2",
            "terms",
        ),
        ("n^100", "exponent"),
        ("n^8 n^8 n^8", "exponent"),
        ("n^(1/0)", "divide by 0"),
        ("n^(", "ends too early"),
        ("(" * 40 + "n" + ")" * 40, "nested"),
        ("n" + " + n" * 100, "longer than"),
    ],
)
def test_a_big_o_answer_cannot_cost_the_judge_time(answer, says):
    import time

    start = time.perf_counter()
    with pytest.raises(Q.AnswerError, match=says):
        Q.parse_expression(answer)
    assert time.perf_counter() - start < 2.0  # was 122 s for the first
    q = question("expression")
    v = verdict(q, answer, Q.Key(q.id, answer="O(n^2 d)"))
    assert v.status == "malformed"


def test_a_table_nested_too_deeply_costs_only_that_table(tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text(
        '[q16_2]\nanswer = "B"\n\n[q16_4]\nanswer = '
        + "[" * 200_000
        + "]" * 200_000
        + '\n\n[q19_1]\nanswer = "O(n^2 d)"\n',
        encoding="utf-8",
    )
    file = Q.read_answers(path)
    assert "nested too deeply" in file.errors["q16_4"]
    assert "line 5" in file.errors["q16_4"]
    for qid in ("q16_2", "q19_1"):
        v = Q.judge(BANK[qid], file.tables[qid], KEY[qid])
        assert v.status == "correct", v.message


def test_an_unquoted_answer_is_told_to_quote_its_text(tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text("[q16_4]\nanswer = (2, 3, 6)\n", encoding="utf-8")
    message = Q.read_answers(path).errors["q16_4"]
    assert "line 2, column" in message
    assert 'text goes in quotes: answer = "(2, 3, 6)"' in message
    path.write_text('[q16_4]\nanswer = "(2, 3, 6)\n', encoding="utf-8")
    assert "quotes:" not in Q.read_answers(path).errors["q16_4"]


def test_the_feedback_deadline_is_read_from_its_setting(tmp_path, monkeypatch):
    """`feedback_after`: curriculum.toml's [questions] date-time, or
    $M2T_FEEDBACK_AFTER for a run; verdicts are hidden while it is ahead;
    a date-time without its offset is refused, naming where it was set."""
    import datetime as dt

    from m2t.questions import feedback

    monkeypatch.delenv(feedback.FEEDBACK_ENV, raising=False)
    course = tmp_path / "curriculum.toml"
    course.write_text(
        '[questions]\nmodule = "questions"\nfeedback_after = '
        "2026-12-20T23:59:00+08:00\n"
    )
    deadline = feedback.feedback_after(course)
    assert deadline == dt.datetime(2026, 12, 20, 15, 59, tzinfo=dt.timezone.utc)
    course.write_text('[questions]\nfeedback_after = "2026-12-20T23:59"\n')
    with pytest.raises(ValueError, match=r"\[questions\] feedback_after"):
        feedback.feedback_after(course)
    course.write_text('[questions]\nmodule = "questions"\n')
    assert feedback.feedback_after(course) is None
    monkeypatch.setenv(feedback.FEEDBACK_ENV, "2030-01-01T00:00:00+00:00")
    when = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
    assert feedback.feedback_after(course) == when
    assert feedback.hidden_until(when - dt.timedelta(seconds=1)) == when
    assert feedback.hidden_until(when) is None
    monkeypatch.setenv(feedback.FEEDBACK_ENV, "none")
    assert feedback.hidden_until() is None
    monkeypatch.setenv(feedback.FEEDBACK_ENV, "tomorrow")
    with pytest.raises(ValueError, match="M2T_FEEDBACK_AFTER"):
        feedback.feedback_after(course)
