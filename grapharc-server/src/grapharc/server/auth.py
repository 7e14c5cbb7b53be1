"""Who may use the server, read from an auth file the operator writes (TOML).

Users sign in to the pages with a password (stored as an argon2 hash) and may decide the
approvals whose ``graph/node`` matches one of their ``may_decide`` globs; ``decides_for``
names the deciders an approval may list (a role such as ``credit-desk``) that the user
answers for, so the audit records ``alice (credit-desk)`` (``grapharc.server.service.decisions``
applies both). API clients send a bearer token
whose SHA-256 is in the file. ``python -m grapharc.server.credentials`` makes both hashes::

    secret = "a long random string that signs the page cookies"

    [users.alice]
    password_hash = "$argon2id$v=19$..."
    decides_for = ["credit-desk"]
    may_decide = ["credit-approval/*"]

    [tokens.ci]
    sha256 = "9f86d08..."
    user = "alice"
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from grapharc.server.errors import AuthFileError

HASHER = PasswordHasher()
_NOBODY = HASHER.hash(secrets.token_hex(16))
"""Checked against when a user name is unknown, so a wrong name costs as long as a wrong password."""


@dataclass(frozen=True, slots=True)
class User:
    """A person who signs in: the deciders they answer for, and the approvals they may decide."""

    name: str
    password_hash: str
    decides_for: tuple[str, ...] = ()
    may_decide: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """The users, the API tokens (by SHA-256) and the secret that signs page cookies."""

    users: dict[str, User]
    tokens: dict[str, str]
    """SHA-256 hex digest of a token -> the user name it acts as."""
    secret: str

    def sign_in(self, name: str, password: str) -> User | None:
        """The user ``name`` if ``password`` is theirs, else None (the same work either way)."""
        user = self.users.get(name)
        try:
            HASHER.verify(user.password_hash if user else _NOBODY, password)
        except (VerificationError, InvalidHashError):
            return None
        return user

    def bearer(self, authorization: str | None) -> User | None:
        """The user an ``Authorization: Bearer <token>`` header acts as, or None."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        presented = token_digest(token.strip())
        name = next((user for digest, user in self.tokens.items()
                     if hmac.compare_digest(digest, presented)), None)
        return None if name is None else self.users[name]


def token_digest(token: str) -> str:
    """What the auth file keeps of an API token: its SHA-256 in hex (tokens are long and random)."""
    return hashlib.sha256(token.encode()).hexdigest()


def load_auth(path: Path) -> AuthConfig:
    """Read and check the auth file at ``path``; ``AuthFileError`` names what is wrong."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AuthFileError(f"cannot read auth file {path}: {exc.strerror or exc}",
                            hint="--auth-file names a TOML file of users and tokens") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise AuthFileError(f"auth file {path} is not TOML: {exc}") from exc
    users = {name: _user(path, name, entry) for name, entry in _table(path, document, "users").items()}
    if not users:
        raise AuthFileError(f"auth file {path} names no users", hint="add a [users.NAME] table")
    tokens = {}
    for name, entry in _table(path, document, "tokens").items():
        digest, user = _text(path, f"tokens.{name}.sha256", entry), _text(path, f"tokens.{name}.user", entry)
        if user not in users:
            raise AuthFileError(f"auth file {path}: token {name!r} acts as user {user!r}, "
                                "who is not in [users]")
        tokens[digest.lower()] = user
    secret = document.get("secret", secrets.token_urlsafe(32))
    if not isinstance(secret, str) or len(secret) < 16:
        raise AuthFileError(f"auth file {path}: secret must be a string of at least 16 characters")
    return AuthConfig(users, tokens, secret)


def _table(path: Path, document: dict[str, Any], key: str) -> dict[str, Any]:
    table = document.get(key, {})
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise AuthFileError(f"auth file {path}: [{key}] must hold one table per name, like [{key}.NAME]")
    return table


def _text(path: Path, where: str, entry: dict[str, Any]) -> str:
    value = entry.get(where.rpartition(".")[2])
    if not isinstance(value, str) or not value:
        raise AuthFileError(f"auth file {path}: {where} must be a non-empty string",
                            hint="python -m grapharc.server.credentials makes password and token hashes")
    return value


def _names(path: Path, where: str, entry: dict[str, Any]) -> tuple[str, ...]:
    value = entry.get(where.rpartition(".")[2], [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise AuthFileError(f"auth file {path}: {where} must be a list of strings")
    return tuple(value)


def _user(path: Path, name: str, entry: dict[str, Any]) -> User:
    unknown = sorted(set(entry) - {"password_hash", "decides_for", "may_decide"})
    if unknown:
        raise AuthFileError(f"auth file {path}: users.{name} has unknown keys {', '.join(unknown)}",
                            hint="a user has password_hash, decides_for and may_decide")
    where = f"users.{name}"
    return User(name, _text(path, f"{where}.password_hash", entry),
                _names(path, f"{where}.decides_for", entry), _names(path, f"{where}.may_decide", entry))
