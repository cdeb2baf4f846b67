"""The graders' library: what more than one grader uses, in one place.

Judge side (runs in the grader, never touches student code):

* `judge`: `CheckFailed`, `Mistake`, `expect_close`, `expect_shape`,
  `expect`, `expect_count`, `expect_reference`, `mistake_outputs`, `memo`.
* `contract`: `expect_layer_contract`, `expect_value_errors` (the verdicts
  on what `probes.layer_contract` and `probes.value_errors` measured).
* `tolerances`: every tolerance (`F32`, `ELEMENTWISE`, `GRAD`, `EXACT`).
* `references`: float64 NumPy `softmax`, `sigmoid`, `bleu`.
* `cnn_references`: float64 convolution, pooling and batch norm, the
  parameter formulas, an architecture's layer table from the formulas,
  `expect_table`, `toy_images` (lessons 02-04).

Probe side (runs the student's code, returns plain numbers and arrays):

* `probes`: `layer_contract`, `gradient_check`, `value_errors`.
* `cnn_probes`: `layer_table`, `transfer`, `transfer_named`, `train_steps`.
"""
