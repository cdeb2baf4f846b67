"""Capstone A (lesson 23): each cell's held-out perplexity after every
epoch of the grader's training, the CPU time it took, and the counting
baseline the judge sets the targets against.

    python -m benchmarks.capstone_language_model             # 3 epochs
    python -m benchmarks.capstone_language_model --epochs 4 --impl lessons
    python -m benchmarks.capstone_language_model --source real --seeds 0 1 2

The capstone's own settings (HYPERPARAMETERS), its loop (`train_epoch`,
`train_step`) and `next_log_probs`, on the grader's split: the keeper's
inventory (m2t_data.toy_inventory) to train on, and 50 new texts of 100
characters held out, read one character at a time as the judge sends them
(graders/test_l23_capstone_language_model.py); `--source real` trains on
The Time Machine and holds out its last 5,000 characters as 50 streams.
The baseline is the judge's: interpolated Kneser-Ney n-grams, the best
order of 1 to 8 on the same streams (graders/lib/ngram.py). CPU is this
process's user + system time for the training so far (the held-out
passes left out); wall times swing with the machine's load.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from graders.lib import ngram
from m2t.grading import impl

PARTS = ("l07_language_model_data", "l08_rnn_scratch", "l10_gru", "l11_lstm")


def measure(
    impl_name: str, epochs: int, cells: list[str], source: str, seeds
) -> list[dict]:
    """One row per (seed, cell, epoch): the training and held-out
    perplexities, and the CPU seconds of training so far."""
    folder = impl.resolve(impl_name)
    m = impl.load("l23_capstone_language_model", folder)
    parts = m.Parts(*(impl.load(name, folder) for name in PARTS))
    train_ids, streams = m.corpus_ids(source)
    order, base, _ = ngram.best(train_ids, streams, len(m.VOCAB))
    print(f"counting baseline: Kneser-Ney order {order}, perplexity {base:.3f}")
    print("| seed | cell | epoch | train | held-out | / baseline | CPU |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for seed in seeds:
        for cell in cells:
            cpu = [time.process_time()]
            models = []

            def report(
                epoch, ppl, cell=cell, seed=seed, models=models, cpu=cpu
            ):
                spent = time.process_time() - cpu[0]
                held = m.held_out_perplexity(models[0], streams)
                cpu[0] = time.process_time() - spent  # held-out pass left out
                rows.append(
                    {"seed": seed, "cell": cell, "epoch": epoch, "train": ppl}
                    | {"held_out": held, "cpu": spent}
                )
                print(
                    f"| {seed} | {cell} | {epoch} | {ppl:.3f} | {held:.3f} | "
                    f"{held / base:.3f} | {spent:.1f} s |",
                    flush=True,
                )

            _capture(m, models)
            m.train(parts, cell, train_ids, {"epochs": epochs}, seed, report)
    return rows


def _capture(m, models: list) -> None:
    """Keep the model `train` builds (for the held-out pass after each
    epoch): wrap `language_model` once."""
    make = getattr(m.language_model, "wrapped", m.language_model)

    def language_model(*args, **kwargs):
        models.clear()
        models.append(make(*args, **kwargs))
        return models[0]

    language_model.wrapped = make
    m.language_model = language_model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="solutions")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--cells", nargs="+", default=["rnn", "gru", "lstm"])
    parser.add_argument("--source", default="embedded")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = parser.parse_args(argv)
    rows = measure(args.impl, args.epochs, args.cells, args.source, args.seeds)
    last = [r for r in rows if r["epoch"] == args.epochs]
    for cell in args.cells:
        held = np.array([r["held_out"] for r in last if r["cell"] == cell])
        print(
            f"{cell}: after {args.epochs} epochs, over {len(held)} seeds: "
            f"mean {held.mean():.3f}, min {held.min():.3f}, "
            f"max {held.max():.3f}"
        )


if __name__ == "__main__":
    main()
