"""m2t dev mutation: cosmic-ray's mutants stay inside the solution regions,
every equivalent mutant on record still exists and has its reason, and
docs/mutation.md keeps the lessons a run did not touch."""

from __future__ import annotations

import pytest

from m2t import ROOT
from m2t.authoring import mutation

SOURCE = '''def f(x, n):
    """Not graded: x < n here is never mutated."""
    y = x < n
    # BEGIN SOLUTION
    z = x + 1
    # END SOLUTION
    return y, z
'''


def test_mutants_change_only_the_solution_regions():
    assert mutation.regions(SOURCE) == [(5, 5)]
    found = mutation.mutants(SOURCE)
    assert found, "no mutant of z = x + 1"
    assert {m.line for m in found} == {5}
    assert {m.after for m in found} >= {"z = x - 1", "z = x + 2"}
    for m in found:
        assert m.source.count("y = x < n") == 1  # outside: untouched


def test_unpaired_markers_are_refused():
    with pytest.raises(ValueError, match="never ended"):
        mutation.regions("# BEGIN SOLUTION\nx = 1\n")
    with pytest.raises(ValueError, match="without"):
        mutation.regions("x = 1\n# END SOLUTION\n")


def test_every_equivalent_mutant_on_record_is_a_mutant_of_its_solution():
    """A solution edited since leaves its entries stale: they must go."""
    for module, reasons in mutation.equivalents().items():
        path = ROOT / "solutions" / f"{module}.py"
        found = mutation.mutants(path.read_text())
        for key, reason in reasons.items():
            named = [m for m in found if mutation.reason_for(m, {key: reason})]
            assert len(named) == 1, (
                f"{module} {key}: names {len(named)} mutants, not one (none: "
                "stale; several: give `follows`, the line above)"
            )


def test_an_equivalent_mutant_needs_its_reason(tmp_path):
    path = tmp_path / "equivalent.toml"
    path.write_text('[[l16_x]]\nbefore = "a"\nafter = "b"\nreason = ""\n')
    with pytest.raises(ValueError, match="needs its reason"):
        mutation.equivalents(path)


def test_markdown_keeps_the_lessons_not_run():
    kept = mutation.Result("l10", mutants=4, killed=4)
    first = mutation.markdown([kept])
    survivor = mutation.Mutant("core/NumberReplacer", 7, "a = 1", "a = 2", "")
    again = mutation.markdown(
        [mutation.Result("l16", 2, 1, survivors=[survivor])], first
    )
    assert "## l10" in again and "## l16" in again
    assert "| l10 | 4 | 4 | 0 | 0 | 100.0% |" in again
    assert "| l16 | 2 | 1 | 0 | 1 | 50.0% |" in again
    assert "- line 7: `a = 1` -> `a = 2` (NumberReplacer)" in again
    assert "l10" not in again.split("Not run yet:")[1].split("\n")[0]


def test_reclassify_moves_survivors_now_on_record_and_grades_nothing():
    before = (
        "u_z, u_r, u_h = ops.split(self.recurrent_kernel, 3, axis=-1)  # (U, U)"
    )
    after = before.replace("axis=-1", "axis=+1")
    on_record = mutation.Mutant("core/X", 9, before, after, "")
    unknown = mutation.Mutant("core/Y", 3, "a = 1", "a = 2", "")
    text = mutation.markdown(
        [mutation.Result("l10", 5, 3, survivors=[on_record, unknown])]
    )
    again = mutation.reclassify(text)
    assert "| l10 | 5 | 3 | 1 | 1 | 80.0% |" in again
    assert "axis 1 is its last axis" in again.split("Equivalent:")[1]
    assert "`a = 1` -> `a = 2` (Y)" in again.split("Equivalent:")[0]
    assert mutation.reclassify(again) == again
