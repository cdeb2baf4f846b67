"""Lesson 22's reference backward pass is one reverse sweep: its CPU time
grows linearly in T (an O(T^2) pass, one chain per loss term, would take
about 16 times as long at T = 200 as at T = 50; a linear one 4 times)."""

from __future__ import annotations

import time

import numpy as np

from m2t import ROOT
from m2t.grading import impl

B, D, U, Q = 2, 3, 4, 6
"""The grader's sizes."""


def _least_cpu_seconds(calls: dict, repeats: int = 15) -> dict:
    """The least CPU time (time.process_time) each of `calls` (name ->
    function) takes over `repeats` rounds, the calls of a round taken in
    turn so that the machine's load falls on all alike; the minimum is what
    that load adds least to."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeats):
        for name, call in calls.items():
            start = time.process_time()
            call()
            best[name] = min(best[name], time.process_time() - start)
    return best


def _case(module, T: int, rng: np.random.Generator):
    params = {
        "W_xh": rng.standard_normal((D, U)) * 0.8,
        "W_hh": rng.standard_normal((U, U)) * 0.6,
        "b_h": rng.standard_normal(U) * 0.3,
        "W_hq": rng.standard_normal((U, Q)) * 0.8,
        "b_q": rng.standard_normal(Q) * 0.3,
    }
    X = rng.standard_normal((B, T, D))
    _, cache = module.rnn_forward(X, rng.standard_normal((B, U)), params)
    return rng.standard_normal((B, T, Q)), cache


def test_reference_backward_is_linear_in_T():
    module = impl.load("l22_bptt", ROOT / "solutions")
    rng = np.random.default_rng(0)
    cases = {T: _case(module, T, rng) for T in (50, 200)}
    calls = {
        (T, tau): lambda c=cases[T], t=tau: [
            module.rnn_backward(*c, t) for _ in range(10)
        ]
        for T in cases
        for tau in (None, 7)
    }
    seconds = _least_cpu_seconds(calls)
    for tau in (None, 7):
        ratio = seconds[200, tau] / seconds[50, tau]
        print(f"tau={tau}: T=200 / T=50 CPU time {ratio:.2f}")
        assert ratio < 6, (tau, seconds)
