"""Training the reference models with `tf.distribute` (instructor side).

    m2t train MODEL [--data embedded|real] [--epochs N] [--batch-size B]
                    [--lr LR] [--strategy auto|default|mirrored|multiworker|tpu]
                    [--cpu-replicas N] [--mixed-precision] [--jit on|off|auto]
                    [--out DIR] [--resume] [--overwrite] [--seed S]
                    [--smoke] [--set KEY=VALUE]
    m2t train --list

One piece per idea: strategy.py (which strategy), data.py (batches in a
seeded order), step.py (the shared step), loop.py (fit, and the
multi-worker loop), checkpoints.py (backup/restore, best model),
report.py, plots.py, recipes.py (the settings), task.py, and one module
per family: images.py, sine.py, language.py, translation.py. run.py puts
them together.
"""

from .recipes import RECIPES
from .run import Options
from .run import train

__all__ = ["RECIPES", "Options", "train"]
