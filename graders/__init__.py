"""The graders: plain pytest, one file per lesson (`test_lNN_topic.py`).

Run them against your lessons with `m2t grade 16` or
`pytest graders/test_l16_attention_scoring.py`; against the reference
solutions with `--impl solutions`. What more than one grader uses (the
judge, tolerances, the Keras layer contract, shared references and probes)
is in `graders/lib/`.
"""
