"""Authoring: the lesson generator, the self-check, mutants, releases."""
