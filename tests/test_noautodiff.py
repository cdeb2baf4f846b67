"""m2t.grading.noautodiff in this process: what a by-hand lesson's code
can and cannot reach while it runs, and that the judge's own modules come
back as they were."""

from __future__ import annotations

import gc
import subprocess
import sys
import types

import pytest

from m2t.grading import noautodiff


def test_the_by_hand_lessons_are_flagged():
    assert noautodiff.is_by_hand("l21_mlp_backprop")
    assert noautodiff.is_by_hand("l22_bptt")
    assert not noautodiff.is_by_hand("l16_attention_scoring")


def test_autodiff_cannot_be_imported_inside_and_the_judges_copy_returns():
    judge_copy = types.ModuleType("torch")  # as if the judge had it loaded
    sys.modules["torch"] = judge_copy
    try:
        with noautodiff.guarded() as loaded:
            assert "torch" not in sys.modules
            for name in ("tensorflow", "keras", "jax", "torch.nn"):
                with pytest.raises(ImportError, match="by hand"):
                    __import__(name)
            with pytest.raises(PermissionError):
                subprocess.run(["true"], check=False)
            with pytest.raises(PermissionError):
                gc.get_objects()
            sys.meta_path[:] = [  # the finder removed: the audit hook holds
                f
                for f in sys.meta_path
                if not isinstance(f, noautodiff._Refuse)
            ]
            with pytest.raises(ImportError, match="by hand"):
                __import__("tensorflow")
        assert loaded == []
        assert sys.modules["torch"] is judge_copy
    finally:
        sys.modules.pop("torch", None)
    subprocess.run(["true"], check=True)  # outside: as before


def test_a_module_loaded_inside_is_reported_and_dropped():
    with noautodiff.guarded() as loaded:
        sys.modules["jax.numpy"] = types.ModuleType("jax.numpy")
    assert loaded == ["jax"]
    assert "jax.numpy" not in sys.modules
