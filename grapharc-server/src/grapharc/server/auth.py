"""Who may use the server and what each may do, read from an auth file the operator writes (TOML).

People sign in to the pages with a password (an argon2 hash); API clients send a bearer token,
either one whose SHA-256 the file keeps (``python -m grapharc.server.credentials`` makes both) or
a JWT an identity provider signed (``[jwt]``, ``grapharc.server.jwt_bearer``). What a user may do
comes from the roles they have (``grapharc.server.grants``): run which assistants, read and delete
which threads (their own, their tenant's, all), decide which approvals, use which store namespaces::

    secret = "a long random string that signs the page cookies"

    [roles.everyone]                  # every user's role; unwritten keys keep these defaults
    run = ["*"]                       # assistants (graph globs) they may run
    read = "own"                      # threads they may read: own, tenant or all
    delete = "own"                    # threads they may delete: none, own, tenant or all
    store = ["{user}"]                # store namespace prefixes they may read and write

    [roles.credit-desk]               # answers for approvals naming the decider "credit-desk"
    decide = ["credit-approval/*"]    # graph/node globs of the approvals it may decide
    read = "tenant"

    [users.alice]
    password_hash = "$argon2id$v=19$..."
    tenant = "acme"
    roles = ["credit-desk"]

    [tokens.ci]
    sha256 = "9f86d08..."
    user = "alice"

A user's own ``may_decide`` (decide globs) and ``decides_for`` (deciders they answer for) still
work as before; ``[sign_in]`` sets how many failed sign-ins a user or an address may make in a
window (``grapharc.server.inbox.throttle``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from grapharc.config.tenants import tenant_name
from grapharc.server.errors import AuthFileError, BearerRefused
from grapharc.server.grants import EVERYONE, EVERYONE_DEFAULT, Rights, Scope, names, parse_roles, rights_of
from grapharc.server.jwt_bearer import JwtVerifier, load_jwt

HASHER = PasswordHasher()
"""Checked against when a user name is unknown, so a wrong name costs as long as a wrong password."""

USER_KEYS = ("password_hash", "tenant", "roles", "decides_for", "may_decide")
TOP_KEYS = ("secret", "users", "tokens", "roles", "jwt", "sign_in")


@dataclass(frozen=True, slots=True)
class User:
    """Someone the server knows: by a password or a token of the auth file, or by a JWT."""

    name: str
    rights: Rights = EVERYONE_DEFAULT
    tenant: str | None = None
    password_hash: str | None = None
    """None: the user cannot sign in to the pages (a token's or a JWT's user only)."""


@dataclass(frozen=True, slots=True)
class SignInLimits:
    """How many failed sign-ins a user, and an address, may make within ``window`` seconds."""

    per_user: int = 5
    per_address: int = 20
    window: float = 900.0


@dataclass(frozen=True)
class AuthConfig:
    """The users, the API tokens (by SHA-256), the roles, the JWT verifier, the sign-in limits and
    the secret that signs page cookies."""

    users: dict[str, User]
    tokens: dict[str, str]
    """SHA-256 hex digest of a token -> the user name it acts as."""
    secret: str
    roles: dict[str, Rights] = field(default_factory=lambda: {EVERYONE: EVERYONE_DEFAULT})
    jwt: JwtVerifier | None = None
    sign_in_limits: SignInLimits = SignInLimits()

    def sign_in(self, name: str, password: str) -> User | None:
        """The user ``name`` if ``password`` is theirs, else None (the same work either way)."""
        user = self.users.get(name)
        known = user.password_hash if user is not None and user.password_hash else None
        try:
            HASHER.verify(known or nobody_hash(), password)
        except (VerificationError, InvalidHashError):
            return None
        return user if known else None

    def bearer(self, authorization: str | None) -> User:
        """The user an ``Authorization: Bearer <token>`` header acts as (``BearerRefused`` saying why not)."""
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise BearerRefused("this server needs a bearer token: Authorization: Bearer <token>")
        presented = token_digest(token)
        name = next((user for digest, user in self.tokens.items() if hmac.compare_digest(digest, presented)),
                    None)
        if name is not None:
            return self.users[name]
        if self.jwt is None or token.count(".") != 2:
            raise BearerRefused("the bearer token is not an API token of this server's auth file")
        claims = self.jwt.claims(token)
        known = self.users.get(claims.user)
        own = known.rights if known is not None else Rights()
        return User(claims.user, rights_of(self.roles, claims.roles, own),
                    claims.tenant or (known.tenant if known is not None else None))


def token_digest(token: str) -> str:
    """What the auth file keeps of an API token: its SHA-256 in hex (tokens are long and random)."""
    return hashlib.sha256(token.encode()).hexdigest()


@cache
def nobody_hash() -> str:
    """The hash a sign-in as an unknown user is checked against, so it takes a known user's time.
    Made on first use (``load_auth``), not on import: every API module imports this one, and an
    argon2 hash (0.2 s of CPU here, a tenth of a server's start-up) is needed only with sign-in."""
    return HASHER.hash(secrets.token_hex(16))


def load_auth(path: Path) -> AuthConfig:
    """Read and check the auth file at ``path``; ``AuthFileError`` names what is wrong. The unknown
    user's hash is made here, so the first sign-in takes no longer than any other."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AuthFileError(f"cannot read auth file {path}: {exc.strerror or exc}",
                            hint="--auth-file names a TOML file of users and tokens") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise AuthFileError(f"auth file {path} is not TOML: {exc}") from exc
    unknown = sorted(set(document) - set(TOP_KEYS))
    if unknown:
        raise AuthFileError(f"auth file {path} has unknown keys {', '.join(unknown)}",
                            hint=f"it holds {', '.join(TOP_KEYS)}")
    verifier = load_jwt(path, document["jwt"]) if "jwt" in document else None
    roles = parse_roles(path, _table(path, document, "roles"))
    users = {name: _user(path, name, entry, roles, verifier)
             for name, entry in _table(path, document, "users").items()}
    if not users and verifier is None:
        raise AuthFileError(f"auth file {path} names no users and no [jwt]",
                            hint="add a [users.NAME] table, or [jwt] to accept an identity provider's tokens")
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
    nobody_hash()
    return AuthConfig(users, tokens, secret, roles, verifier, _limits(path, document))


def _table(path: Path, document: dict[str, Any], key: str) -> dict[str, Any]:
    """The table of tables ``[key.NAME]`` (empty if the file has none)."""
    table = document.get(key, {})
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise AuthFileError(f"auth file {path}: [{key}] must hold one table per name, like [{key}.NAME]")
    return table


def _text(path: Path, where: str, entry: dict[str, Any]) -> str:
    """The non-empty string at ``where`` (its last part is the key in ``entry``)."""
    value = entry.get(where.rpartition(".")[2])
    if not isinstance(value, str) or not value:
        raise AuthFileError(f"auth file {path}: {where} must be a non-empty string",
                            hint="python -m grapharc.server.credentials makes password and token hashes")
    return value


def _tenant(path: Path, where: str, entry: dict[str, Any]) -> str:
    """The tenant name at ``where``, as ``tenant_name`` keeps it (so ``ACME`` is ``acme``)."""
    try:
        return tenant_name(_text(path, where, entry))
    except ValueError as exc:
        raise AuthFileError(f"auth file {path}: {where}: {exc}") from exc


def _user(path: Path, name: str, entry: dict[str, Any], roles: dict[str, Rights],
          verifier: JwtVerifier | None) -> User:
    """The user ``[users.NAME]``, with the rights of everyone, their roles and their own grants."""
    where = f"users.{name}"
    unknown = sorted(set(entry) - set(USER_KEYS))
    if unknown:
        raise AuthFileError(f"auth file {path}: {where} has unknown keys {', '.join(unknown)}",
                            hint=f"a user has {', '.join(USER_KEYS)}")

    def undefined(role: str) -> None:
        """Refuse a role name ``[roles]`` lacks."""
        raise AuthFileError(f"auth file {path}: {where}.roles names role {role!r}, which [roles] does not "
                            "define", hint=f"add [roles.{role}], or take it out of the list")

    own = Rights(decide=names(path, f"{where}.may_decide", entry),
                 decides_for=names(path, f"{where}.decides_for", entry))
    rights = rights_of(roles, names(path, f"{where}.roles", entry), own, undefined)
    tenant = _tenant(path, f"{where}.tenant", entry) if "tenant" in entry else None
    if tenant is None and Scope.TENANT in (rights.read, rights.delete) and \
            (verifier is None or verifier.tenant_claim is None):
        raise AuthFileError(f"auth file {path}: {where} has a role covering its tenant's threads, but "
                            "no tenant", hint=f"set {where}.tenant")
    password = _text(path, f"{where}.password_hash", entry) if "password_hash" in entry else None
    return User(name, rights, tenant, password)


def _limits(path: Path, document: dict[str, Any]) -> SignInLimits:
    """The ``[sign_in]`` limits (the defaults for any it leaves out)."""
    table = document.get("sign_in", {})
    keys = {"failures_per_user": "per_user", "failures_per_address": "per_address",
            "window_seconds": "window"}
    if not isinstance(table, dict) or set(table) - set(keys):
        raise AuthFileError(f"auth file {path}: [sign_in] takes only {', '.join(keys)}")
    for key, value in table.items():
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 86400:
            raise AuthFileError(f"auth file {path}: sign_in.{key} must be a whole number from 1 to 86400; "
                                f"got {value!r}")
    return SignInLimits(**{keys[key]: value for key, value in table.items()})
