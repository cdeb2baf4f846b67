"""Attacks on `m2t grade --submission`: code a student could submit, kept as
text that tests/test_attacks.py appends to a correct lesson file."""
