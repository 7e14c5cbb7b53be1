"""Calling code GraphARC does not own (a plugin's import or hook, an operator's ``--registry``):
what counts as that code failing, and how its failure is named.

Any ``Exception``, and ``SystemExit`` too: a ``sys.exit()`` in a plugin's module would otherwise
end every command with the plugin's exit status and not a word of why. ``KeyboardInterrupt``
(and ``GeneratorExit``) still propagate, so Ctrl+C still interrupts.
"""

from __future__ import annotations

FOREIGN_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)
"""What an ``except`` around a call into foreign code catches as that code's failure."""


def described(exc: BaseException) -> str:
    """``Type: message`` for a failure of foreign code; a ``SystemExit`` names the status it asked for."""
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}): it tried to end the process"
    return f"{type(exc).__name__}: {exc}"
