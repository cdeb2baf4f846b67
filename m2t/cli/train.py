"""`m2t train MODEL` / `m2t train --list`: train a reference model
(instructors; needs the full repository's training/ and solutions/)."""

from __future__ import annotations

import argparse
import sys

from m2t import i18n


def cmd_train(args: argparse.Namespace) -> int:
    from m2t import ROOT
    from m2t.console import quiet_native_stderr

    if (ROOT / "training").is_dir() and str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # the repository's own packages
    import importlib.util

    try:  # instructor side: solutions/ is not in the student edition
        from training import recipes
        from training import run

        if importlib.util.find_spec("solutions") is None:
            raise ModuleNotFoundError("no solutions/", name="solutions")
    except (ModuleNotFoundError, ValueError) as exc:
        # find_spec raises ValueError for a module set to None.
        name = getattr(exc, "name", None) or "solutions"
        if not name.startswith(("solutions", "training")):
            raise
        print(i18n.text("cli.train_full_repository"), file=sys.stderr)
        return 2
    if args.list:
        print(recipes.table(args.data))
        return 0
    if not args.model:
        raise ValueError("name a model to train, or pass --list")
    settings = dict(_setting(text) for text in args.set)
    options = run.Options(
        model=args.model,
        data=args.data,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        strategy=args.strategy,
        mixed_precision=args.mixed_precision,
        jit={"auto": None, "on": True, "off": False}[args.jit],
        out=args.out,
        resume=args.resume,
        seed=args.seed,
        smoke=args.smoke,
        quick=args.quick,
        settings=settings,
        verbose=args.verbose,
        cpu_replicas=args.cpu_replicas,
        overwrite=args.overwrite,
    )
    # Every setting checked and --out locked before TensorFlow's import
    # (seconds of CPU), so a bad flag or a busy folder is refused at once.
    planned = run.plan(options)
    with quiet_native_stderr(True):  # TensorFlow's C++ start-up lines
        import keras  # noqa: F401
        import tensorflow  # noqa: F401
    try:
        run.train(options, planned)
    except FileNotFoundError as exc:  # e.g. Fashion-MNIST not prepared
        print(f"m2t train: {exc}", file=sys.stderr)
        return 2
    return 0


def _setting(text: str) -> tuple[str, object]:
    """`--set key=value`: the value as a Python literal, else a string."""
    import ast

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--set wants KEY=VALUE, got {text!r}")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def register(sub: argparse._SubParsersAction) -> None:
    """Add `train` to the `m2t` parser (hidden where training/ or
    solutions/ is missing: the student edition)."""
    from m2t.cli import scope

    if not scope.training():
        scope.hide(sub, "train", "cli.train_full_repository")
        return

    def say(key: str) -> str:
        return i18n.text(f"help.train.{key}")

    train = sub.add_parser(
        "train",
        help=say("command"),
        description=say("description"),
    )
    train.add_argument("model", nargs="?", help=say("model"))
    train.add_argument("--list", action="store_true", help=say("list"))
    train.add_argument(
        "--data",
        choices=("embedded", "real"),
        default="embedded",
        help=say("data"),
    )
    train.add_argument("--epochs", type=int, help=say("epochs"))
    train.add_argument("--batch-size", type=int, help=say("batch_size"))
    train.add_argument("--lr", type=float, help=say("lr"))
    train.add_argument(
        "--strategy",
        choices=("auto", "default", "mirrored", "multiworker", "tpu"),
        default="auto",
        help=say("strategy"),
    )
    train.add_argument(
        "--cpu-replicas",
        type=int,
        default=2,
        metavar="N",
        help=say("cpu_replicas"),
    )
    train.add_argument(
        "--mixed-precision",
        action="store_true",
        help=say("mixed_precision"),
    )
    train.add_argument(
        "--jit",
        nargs="?",
        const="on",
        default="auto",
        choices=("auto", "on", "off"),
        help=say("jit"),
    )
    train.add_argument("--out", help=say("out"))
    train.add_argument(
        "--resume",
        action="store_true",
        help=say("resume"),
    )
    train.add_argument(
        "--overwrite",
        action="store_true",
        help=say("overwrite"),
    )
    train.add_argument("--seed", type=int, default=0, help=say("seed"))
    train.add_argument("--smoke", action="store_true", help=say("smoke"))
    train.add_argument(
        "--quick",
        action="store_true",
        help=say("quick"),
    )
    train.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=say("set"),
    )
    train.add_argument(
        "--verbose",
        type=int,
        default=1,
        choices=(0, 1, 2),
        help=say("verbose"),
    )
    train.set_defaults(func=cmd_train)
