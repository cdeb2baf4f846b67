"""The test accuracy of a finished image run, counted image by image, and
the same weights with batch normalisation on each test batch's own
statistics (what the moving averages should have given).

    python -m benchmarks.evaluate_run resnet18
    python -m benchmarks.evaluate_run densenet --out runs/densenet-embedded

Reads `OUT/model.weights.h5` (written at the end of `m2t train MODEL`) and
the run's settings from `OUT/report.json`; prints one JSON line. The second
figure calls the network with `training=True`, so it is only a diagnosis
for networks without dropout (ResNet-18, DenseNet); for the others it is
left out.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

WITHOUT_DROPOUT = ("resnet18", "densenet", "googlenet", "nin")


def evaluate(model: str, out: Path) -> dict:
    import numpy as np

    from training import recipes
    from training.images import load
    from training.images import predict
    from training.images import prepare
    from training.step import Trainer

    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    recipe = recipes.RECIPES[model]
    hp = report["settings"]
    source = report["data"]["source"]
    task = prepare(recipe, hp, source, report["seed"], verbose=False)
    net = task.build()
    trainer = Trainer(net, task.loss, correct_fn=task.correct, unit=task.unit)
    trainer(task.example, training=False)
    trainer.load_weights(out / "model.weights.h5")
    with tempfile.TemporaryDirectory() as scratch:  # its pictures
        quality = task.finish(net, Path(scratch), [{}])["quality"]
    x, y = load(source, "test", hp.get("test_examples"), False)
    facts = {
        "model": model,
        "test_accuracy": quality["test_accuracy"],
        "images": int(len(y)),
    }
    if model in WITHOUT_DROPOUT:
        classes = predict(net, x, hp.get("resize"), training=True)
        facts["test_accuracy_batch_statistics"] = float(np.mean(classes == y))
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--out", help="the run's folder (runs/MODEL-DATA)")
    args = parser.parse_args(argv)
    out = Path(args.out or f"runs/{args.model}-embedded")
    if not (out / "model.weights.h5").exists():
        print(
            f"--out: {out} holds no model.weights.h5 (a finished run of "
            f"`m2t train {args.model}` writes it)",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(evaluate(args.model, out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
