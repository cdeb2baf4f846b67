"""The question list: the bank, the key, the student's answers file, and
the judge.

Three files, three audiences:

* `graders/questions/lNN.toml` -- the public bank, one file per lesson: each
  question's id, text in Chinese and English, kind, options and points.
  It ships with the student edition (`questionbank`).
* `solutions/questions_key/lNN.toml` -- the instructor's key, one file per
  lesson: the answer and an explanation in both languages per question. It
  is *not* in the student edition (`key`).
* `answers.toml` in the graded folder (`lessons/answers.toml` for a student,
  `solutions/answers.toml` for the reference answers): one table per id
  (`answers`). `m2t answers-template` writes the empty file with every
  question as comments (`templating`).

Kinds, and what an answer may look like (forgiving where the meaning is
unambiguous, strict otherwise; `forms`, `bigo`, `judging`):

* `one_of`: one letter -- "b", "(B)", ["B"].
* `several_of`: letters -- "a, c", "A C", "AC", ["A", "C"]; the exact set
  unless the question is `open`, where any non-empty set of defensible
  options passes (its free text is never judged).
* `number`: 0.75, "3/4", "7.5e-1"; within the bank's tolerance, or inside
  the key's `range`.
* `shape`: [2, 3, 4], "(2, 3, 4)", "2x3x4", "2 × 3 × 4".
* `expression`: big-O, "O(n^2 d)" = "O(d n^2)" = "O(n²d)" = "n*n*d";
  constants and dominated terms drop out.
* `experiment`: the number the student measured with their own code; the
  expected value comes from the reference formula (`experiments`).

The self-check's consistency checks of bank and key are in `checks`.
"""

from m2t.questions.answers import ANSWERS
from m2t.questions.answers import AnswersFile
from m2t.questions.answers import display
from m2t.questions.answers import is_empty
from m2t.questions.answers import read_answers
from m2t.questions.bigo import parse_expression
from m2t.questions.bigo import show_expression
from m2t.questions.checks import problems
from m2t.questions.choosing import choose
from m2t.questions.experiments import EXPERIMENTS
from m2t.questions.experiments import expected_value
from m2t.questions.forms import AnswerError
from m2t.questions.forms import parse_letters
from m2t.questions.forms import parse_number
from m2t.questions.forms import parse_shape
from m2t.questions.forms import show_shape
from m2t.questions.judging import Verdict
from m2t.questions.judging import expected_reading
from m2t.questions.judging import judge
from m2t.questions.key import KEY_DIR
from m2t.questions.key import Key
from m2t.questions.key import load_key
from m2t.questions.questionbank import BANK_DIR
from m2t.questions.questionbank import KINDS
from m2t.questions.questionbank import SEEDS
from m2t.questions.questionbank import Option
from m2t.questions.questionbank import Question
from m2t.questions.questionbank import bank
from m2t.questions.templating import TEMPLATE
from m2t.questions.templating import any_answered
from m2t.questions.templating import stale
from m2t.questions.templating import template
from m2t.questions.templating import wrap

__all__ = [
    "ANSWERS",
    "BANK_DIR",
    "EXPERIMENTS",
    "KEY_DIR",
    "KINDS",
    "SEEDS",
    "TEMPLATE",
    "AnswerError",
    "AnswersFile",
    "Key",
    "Option",
    "Question",
    "Verdict",
    "any_answered",
    "bank",
    "choose",
    "display",
    "expected_reading",
    "expected_value",
    "is_empty",
    "judge",
    "load_key",
    "parse_expression",
    "parse_letters",
    "parse_number",
    "parse_shape",
    "problems",
    "read_answers",
    "show_expression",
    "show_shape",
    "stale",
    "template",
    "wrap",
]
