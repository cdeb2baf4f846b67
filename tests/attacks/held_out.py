# ruff: noqa: F821  (run: the capstone's own, from the lesson file around)
# Appended to a correct l24 by tests/test_capstone_transformer.py: the
# capstone is asked to translate held-out sources; this `run` trains a
# token model for one epoch on a few pairs and answers with the reference
# translations it finds in the data package the worker can read: every
# split of the embedded corpus under the seeds a grader might use.
_honest_run = run


def run(parts, pairs, sources, hp=None):
    import m2t_data

    out = _honest_run(parts, pairs[:64], sources[:1], {"epochs": 1})
    known = {}
    for seed in range(4):
        for split in ("train", "test"):
            pairs_seen = m2t_data.translation_pairs(
                "embedded", split, seed=seed
            )
            known.update(dict(pairs_seen))
    out["translations"] = [known.get(source, "") for source in sources]
    return out
