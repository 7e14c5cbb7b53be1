"""Helpers for the authorization tests: an auth file of people with different rights, their API
tokens, keys that sign JWTs, and a real ``grapharc serve`` over api_graphs.py's graphs with it.

- alice and bob work at acme (role ``acme-desk``: they read the tenant's threads, run the waiter);
  alice decides the credit desk's approvals, bob none (``may_decide = []``).
- dave works at globex and has only what everyone has (running the credit demo, reading and
  deleting his own threads) and decides the credit desk's approvals, as alice does.
- root has the role ``admin``: reads and deletes every thread.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
from argon2 import PasswordHasher
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from server_process import ServerProcess, grapharc_serve

from grapharc.server.auth import token_digest

TOKENS = {name: f"test-token-for-{name}-0123456789" for name in ("alice", "bob", "dave", "root")}
PASSWORDS = {"alice": "correct horse battery", "bob": "staple tuna", "dave": "globex forever"}
HERE = str(Path(__file__).parent)
ISSUER = "https://login.example.test/"
AUDIENCE = "grapharc-tests"


def auth_file_text(extra: str = "") -> str:
    """The auth file's TOML (``extra`` appended: a [jwt] table, [sign_in] limits)."""
    hasher = PasswordHasher()
    tokens = "".join(f'\n[tokens.{name}]\nsha256 = "{token_digest(token)}"\nuser = "{name}"\n'
                     for name, token in TOKENS.items())
    return f'''secret = "a test secret that is long enough"

[roles.everyone]
run = ["credit-approval"]

[roles.acme-desk]
read = "tenant"
run = ["waiter", "gated-waiter"]

[roles.admin]
read = "all"
delete = "all"

[users.alice]
password_hash = "{hasher.hash(PASSWORDS['alice'])}"
tenant = "acme"
roles = ["acme-desk"]
decides_for = ["credit-desk"]
may_decide = ["credit-approval/*", "gated-waiter/*"]

[users.bob]
password_hash = "{hasher.hash(PASSWORDS['bob'])}"
tenant = "ACME"
roles = ["acme-desk"]
may_decide = []

[users.dave]
password_hash = "{hasher.hash(PASSWORDS['dave'])}"
tenant = "globex"
may_decide = ["credit-approval/*"]
decides_for = ["credit-desk"]

[users.root]
roles = ["admin"]
{tokens}{extra}'''


@contextmanager
def authz_server(tmp: Path, *options: str, extra: str = "") -> Iterator[str]:
    """The URL of a real ``grapharc serve`` (api_graphs.py's graphs, sessions in ``tmp``) with the
    auth file above; the caller puts this folder on the ``PYTHONPATH`` (``HERE``)."""
    auth = tmp / "auth.toml"
    auth.write_text(auth_file_text(extra), encoding="utf-8")
    command = grapharc_serve("--port", "0", "--json", "--sessions", str(tmp / "sessions"),
                             "--registry", "api_graphs:register", "--auth-file", str(auth), *options)
    with ServerProcess(command) as server:
        yield server.json_announcement()["url"]


def client(url: str, who: str | None = None, *, token: str | None = None) -> httpx.Client:
    """An httpx client of the server sending ``who``'s API token (or ``token``, or none)."""
    bearer = token if token is not None else TOKENS[who] if who else None
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    return httpx.Client(base_url=url, timeout=60, headers=headers, follow_redirects=False)


def new_thread(api: httpx.Client, graph: str = "credit-approval") -> str:
    """A thread of ``graph`` the client's user creates."""
    made = api.post("/threads", json={"metadata": {"graph_id": graph}})
    assert made.status_code == 200, made.text
    return str(made.json()["thread_id"])


def paused_credit_thread(api: httpx.Client) -> str:
    """A credit thread the client's user created and ran until it waits on the credit desk."""
    thread = new_thread(api)
    waited = api.post(f"/threads/{thread}/runs/wait",
                      json={"assistant_id": "credit-approval", "input": {"application_id": "LN-7310"}})
    assert waited.status_code == 200 and waited.json()["__interrupt__"], waited.text
    return thread


@dataclass
class SigningKeys:
    """An RSA key in a JWKS file (kid ``rsa-1``) and an EC key in a PEM file (kid ``ec-1``), and the
    auth file's [jwt] table naming both."""

    rsa: rsa.RSAPrivateKey
    ec: ec.EllipticCurvePrivateKey
    table: str

    def token(self, *, kid: str | None = "rsa-1", key: Any = None, algorithm: str = "RS256",
              **claims: Any) -> str:
        """A JWT signed by ``key`` (the RSA key) naming ``kid``: alice of acme with the admin role,
        valid for a minute, unless ``claims`` say otherwise (a None claim is left out)."""
        now = int(time.time())
        payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": "erin", "roles": ["admin"], "tenant": "acme",
                   "iat": now, "exp": now + 60, **claims}
        headers = {"kid": kid} if kid is not None else {}
        return jwt.encode({k: v for k, v in payload.items() if v is not None}, key or self.rsa,
                          algorithm=algorithm, headers=headers)


def signing_keys(folder: Path) -> SigningKeys:
    """Fresh keys, their public halves written to ``folder`` as the [jwt] table names them."""
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key()))
    (folder / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "rsa-1", "alg": "RS256",
                                                            "use": "sig"}]}), encoding="utf-8")
    (folder / "ec-1.pem").write_bytes(ec_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    table = f'''
[jwt]
issuer = "{ISSUER}"
audience = "{AUDIENCE}"
algorithms = ["RS256", "ES256"]
jwks_file = "jwks.json"
tenant_claim = "tenant"

[jwt.keys]
ec-1 = "ec-1.pem"
'''
    return SigningKeys(rsa_key, ec_key, table)
