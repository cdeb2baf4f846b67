"""Capstone A (lesson 23): each cell's held-out perplexity after every
epoch of the grader's training, with the CPU time it took.

    python -m benchmarks.capstone_language_model             # 4 epochs
    python -m benchmarks.capstone_language_model --epochs 6 --impl lessons

The capstone's own `run` settings (HYPERPARAMETERS), its loop
(`train_epoch`, `train_step`) and held-out pass, on the embedded corpus
with the grader's split; the held-out perplexity is computed as the judge
does (graders/test_l23_capstone_language_model.py). CPU is this process's
user + system time for the training so far (the held-out passes left
out); wall times swing with the machine's load, so compare the CPU column.
The grader trains `HYPERPARAMETERS["epochs"]` epochs; its targets are what
the reference reaches in half of them, rounded up.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from m2t.grading import impl

PARTS = ("l07_language_model_data", "l08_rnn_scratch", "l10_gru", "l11_lstm")


def measure(impl_name: str, epochs: int, cells: list[str]) -> list[dict]:
    """One row per (cell, epoch): the training and held-out perplexities,
    CPU and wall seconds of training so far."""
    import keras
    import tensorflow as tf

    folder = impl.resolve(impl_name)
    m = impl.load("l23_capstone_language_model", folder)
    parts = m.Parts(*(impl.load(name, folder) for name in PARTS))
    train_ids, held_ids = m.corpus_ids()
    hp = m.HYPERPARAMETERS
    B, T = int(hp["batch_size"]), int(hp["num_steps"])
    clip, theta = parts.rnn.grad_clipping, float(hp["theta"])
    rows = []
    for cell in cells:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        keras.utils.set_random_seed(0)
        model = m.language_model(parts, cell, len(m.VOCAB), hp["num_hiddens"])
        model(train_ids[None, :T], model.begin_state(1))
        optimizer = keras.optimizers.Adam(float(hp["lr"]))
        optimizer.build(model.trainable_weights)

        @tf.function
        def step(X, Y, state, model=model, optimizer=optimizer):
            return m.train_step(model, optimizer, clip, X, Y, state, theta)

        compiled = m.Compiled(model)
        for epoch in range(epochs):
            ppl = m.train_epoch(
                parts,
                model,
                step,
                train_ids,
                B,
                T,
                bool(hp["use_random_iter"]),
                epoch,
            )
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            log_probs = m.held_out_log_probs(compiled, held_ids, T)
            picked = log_probs[np.arange(len(held_ids) - 1), held_ids[1:]]
            rows.append(
                {
                    "cell": cell,
                    "epoch": epoch + 1,
                    "train": ppl,
                    "held_out": float(np.exp(-picked.mean())),
                    "cpu": cpu,
                    "wall": wall,
                    "load": os.getloadavg()[0],
                }
            )
            print(
                f"| {cell} | {epoch + 1} | {ppl:.3f} | "
                f"{rows[-1]['held_out']:.3f} | {cpu:.1f} s | {wall:.1f} s | "
                f"{rows[-1]['load']:.1f} |",
                flush=True,
            )
            # the held-out pass is not training time
            cpu0 += time.process_time() - cpu - cpu0
            wall0 += time.perf_counter() - wall - wall0
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="solutions")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--cells", nargs="+", default=["rnn", "gru", "lstm"])
    args = parser.parse_args(argv)
    print(
        "| cell | epoch | train perplexity | held-out perplexity | "
        "training CPU | training wall | load |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    measure(args.impl, args.epochs, args.cells)


if __name__ == "__main__":
    main()
