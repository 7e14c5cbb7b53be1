"""Store URIs as messages, logs and ``--json`` documents show them: every credential masked.

A URI may carry a password in its userinfo (``postgresql://user:PASSWORD@host/db``, or without the
``//``, which ``split_uri`` drops anyway) or in its query (``?password=``, ``sslpassword=``, a
``token``, ``secret`` or ``key``). ``masked`` replaces each with ``***``; every place that shows a
store URI shows it through ``masked``. ``scrubbed`` masks them in text another library wrote about
the URI (libpq repeats parts of a URI it cannot parse, password and all). A query parameter's name
is read percent-decoded, as libpq reads it, so ``%70assword=`` is masked too.

Hand-written rather than built on ``urllib.parse``: ``urlsplit`` raises on some malformed URIs (an
unclosed IPv6 bracket), and masking must never raise, least of all on the URI an error is about.
Userinfo runs to the last ``@`` before the query, so a password holding an unencoded ``/`` or ``@``
is masked whole.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote

MASK = "***"
CREDENTIAL_NAME = re.compile(r"pass|pwd|secret|token|key|credential|auth|signature", re.IGNORECASE)
"""A query parameter whose (decoded) name matches holds a credential: ``password``, ``sslpassword``,
``passfile``, ``api_key``, ``sslkey``, ``access_token``, ``client_secret``, ``auth``..."""
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(?://)?")


class _Parts(NamedTuple):
    """A URI cut where its credentials are: ``before`` + password + ``after`` + ``?`` + parameters."""

    before: str
    password: str | None
    after: str
    parameters: list[str] | None


def _parts(uri: str) -> _Parts:
    head, question, query = uri.partition("?")
    start = match.end() if (match := _SCHEME.match(head)) else 0
    userinfo, at, rest = head[start:].rpartition("@")
    parameters = query.split("&") if question else None
    if not at or ":" not in userinfo:
        return _Parts(head, None, "", parameters)
    user, _, password = userinfo.partition(":")
    return _Parts(f"{head[:start]}{user}:", password, f"@{rest}", parameters)


def _credential(parameter: str) -> str | None:
    """The value of a query's ``name=value`` if its name says it is a credential, else ``None``."""
    name, equals, value = parameter.partition("=")
    return value if equals and CREDENTIAL_NAME.search(unquote(name)) else None


def masked(uri: str) -> str:
    """``uri`` with its userinfo password and every credential query parameter's value as ``***``."""
    parts = _parts(uri)
    shown = parts.before + (MASK if parts.password is not None else "") + parts.after
    if parts.parameters is None:
        return shown
    return shown + "?" + "&".join(parameter if _credential(parameter) is None
                                  else f"{parameter.partition('=')[0]}={MASK}"
                                  for parameter in parts.parameters)


def credentials(uri: str) -> list[str]:
    """The credential values ``uri`` holds, as written and percent-decoded, longest first."""
    parts = _parts(uri)
    found = [parts.password, *(_credential(parameter) for parameter in parts.parameters or ())]
    values = {text for value in found if value for text in (value, unquote(value)) if text}
    return sorted(values, key=len, reverse=True)


def scrubbed(text: str, uri: str) -> str:
    """``text`` (another library's message about ``uri``) with ``uri`` shown masked and every
    credential it holds replaced by ``***`` wherever the message repeats it."""
    text = text.replace(uri, masked(uri))
    for secret in credentials(uri):
        text = text.replace(secret, MASK)
    return text
