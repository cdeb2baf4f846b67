"""The graders' library: what more than one grader uses, in one place.

Judge side (runs in the grader, never touches student code):

* `judge`: `CheckFailed`, `Mistake`, `expect_close`, `expect_shape`,
  `expect`, `expect_count`, `expect_reference`, `mistake_outputs` (a
  check's diagnoses from a reference that takes `mistake=`),
  `stack_same_shape`, `fail`, `memo`.
* `contract`: the verdicts on Keras behaviour the probes measured:
  `expect_layer_contract`, `expect_value_errors`, `expect_bad_values_named`,
  `expect_dropout_only_in_training`; `layer_facts` (the contract's
  verdicts, drawn from the values the probe measured); `expect_gradient`
  (a tape gradient against the judge's own: `centred_differences`,
  `state_centred_differences` of its float64 reference).
* `fixtures`: `@reference`, the mark on every judge-side function, whose
  body the grading worker's copy of the graders (and the student edition's)
  never holds; in the edition it looks its output up in graders/fixtures/.
* `tolerances`: every tolerance (`F32`, `ELEMENTWISE`, `GRAD`, `EXACT`).
* `conventions`: the constants of README's "Conventions the graders fix"
  (`LAYER_NORM_EPSILON`, `MASK_FILL`, ...), `CONVENTIONS` (the README's
  list, checked line for line), `book_vs_course` (the message where d2l
  and the course differ).
* `references`: float64 NumPy `softmax`, `sigmoid`, `bleu`.
* `cnn_references`: float64 convolution, pooling and batch norm, the
  parameter formulas, an architecture's layer table from the formulas
  (`simulate`) and its forward pass (lessons 02-04).
* `cnn_judge`: `expect_network_table`, `expect_table`, `expect_loss_falls`.
* `capstone`: `parts_verdict`, the capstones' verdict on the student's
  own parts (each graded by its own grader).
* `data`: small generated inputs (`text_batches`, `toy_images`).

Probe side (runs the student's code, returns plain numbers and arrays):

* `probes`: `layer_contract`, `tape_gradient` (the judge compares it with
  its own reference's centred differences, `contract.expect_gradient`),
  `in_float64`, `state_gradient`, `dropout_outputs`, `value_errors`.
* `cnn_probes`: `layer_table`, `transfer`, `transfer_named`, `train_steps`.

A check a second grader needs goes here: the probe half in `probes` (or
`cnn_probes`), the verdict in `contract` or `judge`, with shapes in the
docstring.
"""
