"""The lesson rules (m2t/authoring/rules.py): every lesson meets each, the
course-wide part is fresh, and each rule fails, naming the file and the
fix, on a lesson that breaks it. `m2t dev check` runs the same functions
(tests/test_selfcheck.py shows the gate and these agree)."""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from m2t import ROOT
from m2t import curriculum
from m2t.authoring import grader_rules
from m2t.authoring import rules
from m2t.authoring import scaffold

LESSONS = rules.lessons_ruled(curriculum.lessons())


@pytest.mark.parametrize("rule", rules.RULES, ids=lambda r: r.__name__)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda x: x.tag)
def test_every_lesson_meets_every_rule(lesson, rule):
    problems = rule(lesson)
    assert problems == [], "\n".join(problems)


def test_what_no_lesson_owns_is_fresh():
    problems = rules.course()
    assert problems == [], "\n".join(problems)


def test_what_no_lesson_owns_fails_when_stale(tmp_path):
    root = tmp_path / "course"
    for folder, pattern in [
        ("solutions", "l[0-9][0-9]_*.py"),
        ("lessons", "l[0-9][0-9]_*.py"),
        ("lessons/hints", "*.toml"),
        ("docs", "specs.md"),
    ]:
        (root / folder).mkdir(parents=True)
        for path in (ROOT / folder).glob(pattern):
            shutil.copy(path, root / folder / path.name)
    assert rules.course(root) == []
    (root / "lessons" / "l01_mlp.py").write_text("x = 1\n")
    specs = root / "docs" / "specs.md"
    specs.write_text(specs.read_text().replace("| **all** | ", "| **all** | 1"))
    assert rules.course(root) == [
        "stale: lessons/l01_mlp.py: differs from solutions/l01_mlp.py: run "
        "`m2t make-lessons`",
        "docs/specs.md is stale: run `m2t make-lessons --markdown "
        "docs/specs.md`",
    ]


def test_every_rule_is_in_the_gate():
    """The gate runs RULES; a rule defined but left off it would be
    enforced by nothing."""
    defined = {
        name
        for module in (rules, grader_rules)
        for name, value in vars(module).items()
        if callable(value)
        and not name.startswith("_")
        and name != "check"  # every rule, one after the other
        and getattr(value, "__annotations__", {}).get("return") == "list[str]"
        and getattr(value, "__module__", "")
        in (rules.__name__, grader_rules.__name__)
        and list(getattr(value, "__code__", None).co_varnames[:2])
        == ["lesson", "root"]
    }
    assert defined == {rule.__name__ for rule in rules.RULES}


# ------------------------------------------------ each rule fails, by name
L15 = curriculum.find("15")
L16 = curriculum.find("16")


def _course(tmp_path: Path, lesson: curriculum.Lesson) -> Path:
    """A course folder holding `lesson`'s files and docs/ alone."""
    root = tmp_path / "course"
    for path in scaffold.footprint(lesson).values():
        target = root / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    shutil.copytree(ROOT / "docs", root / "docs")
    zh = root / "graders" / "messages" / "mistakes.zh.toml"
    zh.parent.mkdir()
    shutil.copy(ROOT / zh.relative_to(root), zh)
    return root


def _edit(role: str, old: str, new: str, every: bool = False) -> Callable:
    """An edit of the lesson's `role` file: `old` (there) becomes `new`,
    the first time or `every` time."""

    def edit(root: Path, lesson: curriculum.Lesson) -> curriculum.Lesson:
        path = scaffold.footprint(lesson, root)[role]
        text = path.read_text(encoding="utf-8")
        assert old in text, (role, old)
        path.write_text(
            text.replace(old, new, -1 if every else 1), encoding="utf-8"
        )
        return lesson

    return edit


def _delete(role: str) -> Callable:
    def edit(root: Path, lesson: curriculum.Lesson) -> curriculum.Lesson:
        scaffold.footprint(lesson, root)[role].unlink()
        return lesson

    return edit


def _object(root: Path, lesson: curriculum.Lesson) -> curriculum.Lesson:
    return dataclasses.replace(lesson, objects=(*lesson.objects, "nowhere"))


def _mistakes_md(root: Path, lesson: curriculum.Lesson) -> curriculum.Lesson:
    path = root / "docs" / "mistakes.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("| l16 | `no_scale` | yes |", "| l16 | x |"))
    return lesson


def _no_chinese_for_no_scale(root: Path, lesson: curriculum.Lesson):
    path = root / "graders" / "messages" / "mistakes.zh.toml"
    text = (ROOT / path.relative_to(root)).read_text(encoding="utf-8")
    start = text.index("[l16_attention_scoring]")
    at = text.index("\nno_scale = ", start) + 1
    end = text.index("\n", at) + 1
    path.write_text(text[:at] + text[end:], encoding="utf-8")
    return lesson


def _specs_md(root: Path, lesson: curriculum.Lesson) -> curriculum.Lesson:
    path = root / "docs" / "specs.md"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(
        "".join(x for x in lines if not x.startswith("| l16_")),
        encoding="utf-8",
    )
    return lesson


def _second_ladder_zh(root: Path, lesson: curriculum.Lesson):
    """The hints with the second [todo.zh] table cut out."""
    path = scaffold.footprint(lesson, root)["hints"]
    parts = re.split(r"(?m)^(?=\[)", path.read_text(encoding="utf-8"))
    zh = [i for i, part in enumerate(parts) if part.startswith("[todo.zh]")]
    del parts[zh[1]]
    path.write_text("".join(parts), encoding="utf-8")
    return lesson


def _vague_first_rungs(root: Path, lesson: curriculum.Lesson):
    """The hints with the first TODO's api and near rungs naming no call."""
    path = scaffold.footprint(lesson, root)["hints"]
    text = path.read_text(encoding="utf-8")
    for rung in ("api", "near"):
        text = re.sub(
            rf'(?s)^{rung} = """.*?"""$',
            f'{rung} = "shapes in, shapes out"',
            text,
            count=1,
            flags=re.M,
        )
    path.write_text(text, encoding="utf-8")
    return lesson


PLANTED = {
    "files_in_place": (
        L16,
        _delete("notebook"),
        "l16 (l16_attention_scoring): no notebook file "
        "notebooks/l16_attention_scoring.py: write it (its template: "
        "m2t/authoring/templates/lesson/notebook.py.tmpl)",
    ),
    "objects_defined": (
        L16,
        _object,
        "curriculum.toml lists 'nowhere', which "
        "solutions/l16_attention_scoring.py does not define",
    ),
    "author_todos": (
        L16,
        _edit("notes", "## 自测\n", "## 自测\n\nTODO(author): more.\n"),
        "lessons/notes/l16_attention_scoring.md:",
    ),
    "grader_imports": (
        L16,
        _edit(
            "grader",
            "import numpy as np\n",
            "import numpy as np\nimport solutions.l16_attention_scoring\n",
        ),
        "imports solutions.l16_attention_scoring: reach the student's code "
        "only through probes",
    ),
    "references_marked": (
        L16,
        _edit("grader", "@reference\ndef ref_", "def ref_"),
        "is not marked: put `@reference`",
    ),
    "contract_check": (
        L16,
        _edit("grader", "layer_contract", "layer_facts_of", every=True),
        "graders/test_l16_attention_scoring.py has no contract check for",
    ),
    "gradient_check": (
        L15,
        _edit("grader", "expect_gradient", "expect_close_to", every=True),
        "graders/test_l15_attention_pooling.py has no gradient check",
    ),
    "mistakes_catalogued": (
        L16,
        _edit("mutants", "[no_scale]", "[no_scale_at_all]"),
        "mistake 'no_scale' has no mutant: add a [no_scale] table to "
        "solutions/mutants/l16_attention_scoring.toml",
    ),
    "mistakes_in_both_languages": (
        L16,
        _no_chinese_for_no_scale,
        "graders/messages/mistakes.zh.toml has no [l16_attention_scoring] "
        "no_scale: write each mistake's explanation in Chinese there",
    ),
    "mutants_apply": (
        L16,
        _edit("solution", "/ ops.sqrt(d)", "/ ops.sqrt(d * 1.0)"),
        "mutant 'no_scale' of solutions/mutants/l16_attention_scoring.toml: "
        "its text",
    ),
    "mistakes_documented": (
        L16,
        _mistakes_md,
        "docs/mistakes.md has no row for mutant 'no_scale': run "
        "`m2t mutants 16`",
    ),
    "hints_per_todo": (
        L16,
        _edit("hints", 'where = "masked_softmax"', 'where = "elsewhere"'),
        "lessons/hints/l16_attention_scoring.toml: one [[todo]] per TODO",
    ),
    "hints_in_both_languages": (
        L16,
        _second_ladder_zh,
        "lessons/hints/l16_attention_scoring.toml: no [todo.zh] for "
        "AdditiveAttention.call",
    ),
    "hints_name_the_calls": (
        L16,
        _vague_first_rungs,
        "(masked_softmax): the api and near rungs name",
    ),
    "hints_do_not_repeat_todos": (
        L16,
        _edit(
            "hints",
            'idea = """\\\nCompare each key',
            'idea = """\\\nThe kept weights of a row sum to 1, and a row '
            "of valid length 0 is zeros. Compare each key",
        ),
        "(masked_softmax): rung 'idea' repeats its TODO",
    ),
    "notes_in_both_languages": (
        L16,
        _edit("notes", "## 自测", "## Self-check"),
        "lessons/notes/l16_attention_scoring.md: the sections are",
    ),
    "specs_fresh": (
        L16,
        _specs_md,
        "l16 (l16_attention_scoring): docs/specs.md is stale: run "
        "`m2t make-lessons --markdown docs/specs.md`",
    ),
}
"""Rule name -> (the lesson, an edit of its files that breaks the rule,
what the rule's problem says)."""


def test_every_rule_has_a_planted_bug():
    assert set(PLANTED) == {rule.__name__ for rule in rules.RULES}


@pytest.mark.parametrize("rule", rules.RULES, ids=lambda r: r.__name__)
def test_a_rule_fails_on_its_planted_bug(rule, tmp_path):
    lesson, edit, says = PLANTED[rule.__name__]
    root = _course(tmp_path, lesson)
    assert rule(lesson, root) == []  # the copy meets it
    broken = edit(root, lesson)
    problems = rule(broken, root)
    assert any(says in p for p in problems), problems
    assert all(
        p.startswith(f"{lesson.tag} ({lesson.module}): ") for p in problems
    )


def test_minimums_wait_for_the_marker_that_stands_for_them(tmp_path):
    """An empty MISTAKES under a TODO(author) is reported as the marker;
    once the marker is gone, as the minimum it stood for."""
    root = _course(tmp_path, L16)
    grader = scaffold.footprint(L16, root)["grader"]
    mutants = scaffold.footprint(L16, root)["mutants"]
    text = grader.read_text(encoding="utf-8")
    start = text.index("\nMISTAKES = (") + 1
    end = text.index("\n)\n", start) + 3
    grader.write_text(
        text[:start]
        + "# TODO(author): a mistake.\nMISTAKES = ()\n"
        + text[end:]
    )
    mutants.write_text("")
    assert rules.mistakes_catalogued(L16, root) == []
    assert any("TODO(author)" in p for p in rules.author_todos(L16, root))
    grader.write_text(
        grader.read_text().replace("# TODO(author): a mistake.\n", "")
    )
    assert rules.mistakes_catalogued(L16, root) == [
        "l16 (l16_attention_scoring): graders/test_l16_attention_scoring.py: "
        "MISTAKES is empty: catalogue at least one known mistake, with its "
        "mutant in solutions/mutants/l16_attention_scoring.toml "
        "(CONTRIBUTING, Writing a lesson, 6)"
    ]
