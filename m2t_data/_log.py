"""The one-line ``data: ...`` notice every loader can print."""

from __future__ import annotations

import logging

log = logging.getLogger("m2t.datasets")


def announce(message: str, verbose: bool) -> None:
    """Log ``message`` at INFO and, if ``verbose``, print it.

    Messages read ``data: <name> (<embedded|real>, <seed or path>)``.
    """
    log.info(message)
    if verbose:
        print(message, flush=True)
