"""The student loop: watch, hints, progress, reset, notebooks."""
