"""Grading: the runner, the probe/judge split, the sandbox, reports."""
