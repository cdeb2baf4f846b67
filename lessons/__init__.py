"""Your exercises: one module per lesson. Fill in each TODO, then run
`m2t grade LESSON` (e.g. `m2t grade 16`)."""
