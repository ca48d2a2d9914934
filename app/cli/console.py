"""The rich Console every command prints through: the terminal's width there, no width limit when piped.

rich sizes a Console that is not writing to a terminal at 80 columns, so a table in a CI log or
a pipe cut ids, paths and URLs. Piped output here is as wide as its content instead (a table is
never padded to the width, so nothing grows but the lines that need it). `COLUMNS`, when set,
still wins. Colour only on a terminal, and never with `NO_COLOR` (both rich's own rules).
"""

from __future__ import annotations

import os

from rich.console import Console

# Wide enough for any id, path or URL; not unbounded, since rules and panels pad to the width.
PIPED_WIDTH = 10_000


def console(*, stderr: bool = False) -> Console:
    """A Console for this invocation's stdout (or stderr); made per call, so it sees the stream of the moment."""
    made = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not made.is_terminal and not os.environ.get("COLUMNS"):
        made.width = PIPED_WIDTH
    return made
