"""Secrets never leave a run in plain text: the values of secret variables, redacted wherever a run writes.

A secret is the value of an environment variable that is one of ``KNOWN`` (the provider keys the
model gateway reads), whose name ends in one of ``SUFFIXES`` (``_KEY``, ``_TOKEN``, ``_SECRET``,
``_PASSWORD``...), or that the operator names in ``GRAPHARC_SECRET_ENV`` (a comma list) or in the
``secret_env`` setting; plus any value a component registers (a key read from a ``.env`` file, a
server's tokens). Values shorter than ``MIN_SECRET_CHARS`` are left alone: replacing every
``true`` or ``admin`` would garble ordinary text, and a credential is longer. Each occurrence,
as written or JSON-escaped, becomes ``[redacted:NAME]``. What is not caught: a secret encoded
(base64, URL-quoted) or split across two strings. Written by hand: it is a few substring
replacements over a handful of values, with nothing a library would add.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_ENV = "GRAPHARC_SECRET_ENV"  # noqa: S105 -- the variable's name, not a secret
"""The environment variable naming more secret variables, comma-separated."""
KNOWN = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "NOVITA_API_KEY",
                   "PGPASSWORD", "DATABASE_URL"})
SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_SECRETS", "_PASSWORD", "_PASSWD", "_CREDENTIALS")
MIN_SECRET_CHARS = 8
MARK = "[redacted:{}]"

_lock = threading.Lock()
_registered: dict[str, str] = {}
"""Secret values not in the environment, by value: the label they are redacted as."""
_version = 0
"""Bumped by each registration, so a redactor made earlier picks the new value up."""
_marked: set[str] = set()
"""Variable names marked secret by a setting (``secret_env``) rather than the environment."""
_marks = 0
"""Bumped by each marking, so the process's redactor is made again (``_process_redactor``)."""
_made: tuple[dict[Any, Any], int, int, Redactor] | None = None
"""The process's redactor, with the environment, ``_version`` and ``_marks`` it was made from."""


def is_secret_name(name: str, marked: Iterable[str] = ()) -> bool:
    """Whether the variable ``name`` holds a secret (known, by its suffix, or marked)."""
    upper = name.upper()
    return upper in KNOWN or upper.endswith(SUFFIXES) or name in marked


def secret_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The variables of ``environ`` (default: this process's) whose values are secrets."""
    environ = os.environ if environ is None else environ
    marked = {part.strip() for part in environ.get(SECRET_ENV, "").split(",") if part.strip()}
    with _lock:
        marked |= _marked
    return sorted(name for name in environ if name != SECRET_ENV and is_secret_name(name, marked))


def mark_secret_names(names: Iterable[str]) -> None:
    """Treat the variables ``names`` as secrets from now on (the ``secret_env`` setting)."""
    global _marks
    with _lock:
        _marked.update(name.strip() for name in names if name.strip())
        _marks += 1


def register_secret(value: str, label: str) -> None:
    """Redact ``value`` as ``[redacted:label]`` from now on (a secret that is not in the environment)."""
    global _version
    if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            if _registered.get(value) != label:
                _registered[value] = label
                _version += 1


def current_redactor(environ: Mapping[str, str] | None = None) -> Redactor:
    """A redactor of every secret configured now: the environment's, then the registered ones."""
    if environ is None or environ is os.environ:
        return _process_redactor()
    return _made_from(environ)


def _made_from(environ: Mapping[str, str]) -> Redactor:
    return Redactor({environ[name]: name for name in secret_names(environ)})


def _process_redactor() -> Redactor:
    """``current_redactor`` of this process's environment: the one made last while neither the
    environment nor a registered value nor a marked name has changed since (a redactor is never
    changed once made), else a new one. Asked for by every audit entry a session store writes: making
    one reads every variable's name, a hundred times the cost of comparing the environment with the
    copy kept (``os.environ``'s own encoded dict; without one, a redactor is made each time)."""
    global _made
    data = getattr(os.environ, "_data", None)
    made = _made
    if made is not None and made[1] == _version and made[2] == _marks and made[0] == data:
        return made[3]
    kept = (dict(data), _version, _marks) if isinstance(data, dict) else None
    redactor = _made_from(os.environ)  # a change meanwhile is not in ``kept``: the next call makes another
    if kept is not None:
        _made = (*kept, redactor)
    return redactor


class Redactor:
    """Replaces the values of known secrets in text and in JSON-like data (see the module docstring).

    ``secrets`` maps each value to the label it is redacted as; the registered ones are added.
    """

    def __init__(self, secrets: Mapping[str, str]) -> None:
        with _lock:
            self._version = _version
            everything = {**_registered, **secrets}
        self._secrets = dict(secrets)
        pairs = [(value, MARK.format(label)) for value, label in everything.items()
                 if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS]
        escaped = [(json.dumps(value, ensure_ascii=False)[1:-1], mark) for value, mark in pairs]
        forms = dict(pairs)
        forms.update((form, mark) for form, mark in escaped if form not in forms)
        self._forms = sorted(forms.items(), key=lambda item: -len(item[0]))  # longest first
        self._encoded = [form.encode("utf-8") for form, _ in self._forms]

    def __bool__(self) -> bool:
        return bool(self._forms)

    def refreshed(self) -> Redactor:
        """This redactor, or a new one that also knows the secrets registered since it was made."""
        return self if self._version == _version else Redactor(self._secrets)

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by its mark."""
        for form, mark in self._forms:
            if form in text:
                text = text.replace(form, mark)
        return text

    def found_in(self, data: bytes) -> bool:
        """Whether ``data`` (encoded text, such as a JSON line) holds a secret."""
        return any(form in data for form in self._encoded)

    def scrub(self, value: Any) -> Any:
        """``value`` with secrets replaced in every string of its dicts, lists and tuples (keys too);
        ``value`` itself when nothing changed. Other objects are returned as they are."""
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            items = [(self.scrub(key), self.scrub(item)) for key, item in value.items()]
            changed = any(new_key is not key or new is not item
                          for (new_key, new), (key, item) in zip(items, value.items(), strict=True))
            return dict(items) if changed else value
        if isinstance(value, list | tuple):
            scrubbed = [self.scrub(item) for item in value]
            if all(new is old for new, old in zip(scrubbed, value, strict=True)):
                return value
            return scrubbed if isinstance(value, list) else tuple(scrubbed)
        return value

    def scrub_exception(self, exc: BaseException) -> str | None:
        """``exc``'s message redacted, or None when it holds no secret."""
        try:
            message = str(exc)
        except Exception:
            return None
        redacted = self.redact(message)
        return None if redacted == message else redacted
