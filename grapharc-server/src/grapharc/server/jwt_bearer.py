"""Bearer JWTs from an identity provider, verified with PyJWT against keys the operator configures.

The auth file's ``[jwt]`` table names the issuer and audience every token must carry, the
algorithms accepted (asymmetric only: a shared secret does not belong in a file every worker
reads), and the keys: a JWKS file (``jwks_file``) and/or PEM public keys by key id
(``[jwt.keys]``), read once as the server starts (a rotated key needs a restart). Expiry is
required and checked (with ``leeway_seconds``); the user is read from ``user_claim`` (``sub``), their
roles from ``roles_claim`` (``roles``: a list, or one space-separated string), their tenant from
``tenant_claim`` if named. Every refusal says which check failed (``BearerRefused``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from grapharc.config.tenants import tenant_or_none
from grapharc.server.errors import AuthFileError, BearerRefused

ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
JWT_KEYS = ("issuer", "audience", "algorithms", "jwks_file", "keys", "user_claim", "roles_claim",
            "tenant_claim", "leeway_seconds")


@dataclass(frozen=True)
class Claims:
    """Who a verified token says the caller is."""

    user: str
    roles: tuple[str, ...]
    tenant: str | None


@dataclass(frozen=True)
class JwtVerifier:
    """Checks a JWT's signature, issuer, audience and expiry, then reads who it names."""

    issuer: str
    audience: str
    algorithms: tuple[str, ...]
    keys: dict[str | None, Any]
    """Public keys by key id (None: the one key of a JWKS entry without ``kid``)."""
    user_claim: str = "sub"
    roles_claim: str = "roles"
    tenant_claim: str | None = None
    leeway: float = 0.0

    def claims(self, token: str) -> Claims:
        """Who ``token`` names, once every check passed (``BearerRefused`` saying which did not)."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise BearerRefused("the bearer token is neither an API token of the auth file nor a "
                                "JWT") from None
        key = self._key(header.get("kid"))
        algorithm = header.get("alg")
        if algorithm not in self.algorithms:
            raise BearerRefused(f"the JWT is signed with {str(algorithm)[:20]!r}, which this server does not "
                                f"accept (it accepts {', '.join(self.algorithms)})")
        try:
            payload = jwt.decode(token, key, algorithms=list(self.algorithms), audience=self.audience,
                                 issuer=self.issuer, leeway=self.leeway,
                                 options={"require": ["exp", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise BearerRefused("the JWT has expired (its exp has passed)") from None
        except jwt.InvalidIssuerError:
            raise BearerRefused(f"the JWT's issuer (iss) is not {self.issuer!r}") from None
        except jwt.InvalidAudienceError:
            raise BearerRefused(f"the JWT's audience (aud) is not {self.audience!r}") from None
        except jwt.InvalidSignatureError:
            raise BearerRefused("the JWT's signature does not verify with the key it names") from None
        except jwt.MissingRequiredClaimError as exc:
            raise BearerRefused(f"the JWT has no {exc.claim!r} claim, which this server requires") from None
        except jwt.ImmatureSignatureError:
            raise BearerRefused("the JWT is not valid yet (its nbf or iat is in the future)") from None
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise BearerRefused(f"the JWT cannot be verified: {exc}") from None
        return self._who(payload)

    def _key(self, kid: Any) -> Any:
        """The key the token's header names (by ``kid``; without one, the only key there is)."""
        if kid is None:
            if len(self.keys) == 1:
                return next(iter(self.keys.values()))
            raise BearerRefused(f"the JWT names no key (kid) and this server has {len(self.keys)} keys")
        if not isinstance(kid, str) or kid not in self.keys:
            raise BearerRefused(f"the JWT's key id (kid) {str(kid)[:80]!r} is not a key this server knows")
        return self.keys[kid]

    def _who(self, payload: dict[str, Any]) -> Claims:
        """The user, roles and tenant a verified token's claims name (refused if they name no user)."""
        user = payload.get(self.user_claim)
        if not isinstance(user, str) or not user:
            raise BearerRefused(f"the JWT's {self.user_claim!r} claim does not name a user")
        roles = payload.get(self.roles_claim, [])
        if isinstance(roles, str):
            roles = roles.split()
        if not isinstance(roles, list) or not all(isinstance(role, str) for role in roles):
            raise BearerRefused(f"the JWT's {self.roles_claim!r} claim is not a list of role names")
        tenant = payload.get(self.tenant_claim) if self.tenant_claim else None
        if tenant is not None and (not isinstance(tenant, str) or not tenant):
            raise BearerRefused(f"the JWT's {self.tenant_claim!r} claim is not a tenant name")
        try:
            return Claims(user, tuple(roles), tenant_or_none(tenant))
        except ValueError as exc:
            raise BearerRefused(f"the JWT's {self.tenant_claim!r} claim is not a tenant name: {exc}") from exc


def load_jwt(path: Path, table: Any) -> JwtVerifier:
    """The verifier the auth file at ``path`` configures in ``[jwt]`` (``AuthFileError`` naming the key)."""
    if not isinstance(table, dict):
        raise AuthFileError(f"auth file {path}: [jwt] must be a table")
    unknown = sorted(set(table) - set(JWT_KEYS))
    if unknown:
        raise AuthFileError(f"auth file {path}: jwt has unknown keys {', '.join(unknown)}",
                            hint=f"[jwt] takes {', '.join(JWT_KEYS)}")
    issuer, audience = _text(path, table, "issuer"), _text(path, table, "audience")
    algorithms = table.get("algorithms", ["RS256", "ES256"])
    if not isinstance(algorithms, list) or not algorithms or not all(a in ASYMMETRIC for a in algorithms):
        raise AuthFileError(f"auth file {path}: jwt.algorithms must list some of {', '.join(ASYMMETRIC)}; "
                            f"got {algorithms!r}", hint="shared-secret algorithms (HS256) are not accepted")
    leeway = table.get("leeway_seconds", 0)
    if not isinstance(leeway, int | float) or isinstance(leeway, bool) or not 0 <= leeway <= 300:
        raise AuthFileError(f"auth file {path}: jwt.leeway_seconds must be a number from 0 to 300")
    keys = {**_jwks(path, table), **_pem_keys(path, table)}
    if not keys:
        raise AuthFileError(f"auth file {path}: [jwt] names no key", hint="set jwt.jwks_file or [jwt.keys]")
    tenant = _text(path, table, "tenant_claim") if "tenant_claim" in table else None
    return JwtVerifier(issuer, audience, tuple(algorithms), keys,
                       user_claim=_text(path, table, "user_claim", "sub"),
                       roles_claim=_text(path, table, "roles_claim", "roles"), tenant_claim=tenant,
                       leeway=float(leeway))


def _text(path: Path, table: dict[str, Any], key: str, default: str | None = None) -> str:
    """The non-empty string at ``jwt.key`` (or ``default``)."""
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise AuthFileError(f"auth file {path}: jwt.{key} must be a non-empty string")
    return value


def _file(path: Path, where: str, name: Any) -> bytes:
    """The bytes of the file ``name`` (relative to the auth file's folder) the key ``where`` names."""
    if not isinstance(name, str) or not name:
        raise AuthFileError(f"auth file {path}: {where} must name a file")
    try:
        return (path.parent / name).read_bytes()
    except OSError as exc:
        raise AuthFileError(f"auth file {path}: {where}: cannot read {name}: {exc.strerror or exc}") from None


def _jwks(path: Path, table: dict[str, Any]) -> dict[str | None, Any]:
    """The public keys of the JWKS file ``jwt.jwks_file`` names, by kid (none without the key)."""
    if "jwks_file" not in table:
        return {}
    try:
        document = json.loads(_file(path, "jwt.jwks_file", table["jwks_file"]))
        found = jwt.PyJWKSet.from_dict(document).keys
    except (ValueError, jwt.PyJWTError, AttributeError, TypeError) as exc:
        raise AuthFileError(f"auth file {path}: jwt.jwks_file {table['jwks_file']} is not a JWKS with "
                            f"usable public keys: {exc}") from None
    keys = {key.key_id: key.key for key in found}
    if len(keys) < len(found):
        raise AuthFileError(f"auth file {path}: jwt.jwks_file {table['jwks_file']} has keys without a kid, "
                            "or two with one kid", hint="give each key a kid of its own")
    return keys


def _pem_keys(path: Path, table: dict[str, Any]) -> dict[str | None, Any]:
    """The PEM public keys ``[jwt.keys]`` names, by kid."""
    named = table.get("keys", {})
    if not isinstance(named, dict):
        raise AuthFileError(f"auth file {path}: jwt.keys must be a table of key id = PEM file")
    keys: dict[str | None, Any] = {}
    for kid, name in named.items():
        try:
            keys[kid] = load_pem_public_key(_file(path, f"jwt.keys.{kid}", name))
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise AuthFileError(f"auth file {path}: jwt.keys.{kid} ({name}) is not a PEM public key: "
                                f"{exc}") from None
    return keys
