"""The auth file's roles, users and [jwt] table: what they grant, and every mistake refused with an
``AuthFileError`` naming the key (``grapharc serve`` then exits 2 with one line, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grapharc.server.auth import load_auth
from grapharc.server.errors import AuthFileError
from grapharc.server.grants import Scope


def _auth(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "auth.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_users_rights_are_everyones_joined_with_their_roles_and_own_grants(tmp_path):
    auth = load_auth(_auth(tmp_path, '''
[roles.everyone]
read = "own"

[roles.credit-desk]
decide = ["credit-approval/*"]
read = "tenant"

[roles.admin]
read = "all"
delete = "all"

[users.alice]
tenant = "acme"
roles = ["credit-desk"]
may_decide = ["other/*"]

[users.root]
roles = ["admin"]

[users.nobody]
'''))
    alice, root, nobody = (auth.users[name].rights for name in ("alice", "root", "nobody"))
    assert (alice.run, alice.read, alice.delete) == (("*",), Scope.TENANT, Scope.OWN)
    assert set(alice.decide) == {"credit-approval/*", "other/*"} and alice.decides_for == ("credit-desk",)
    assert (root.read, root.delete) == (Scope.ALL, Scope.ALL)
    assert (nobody.run, nobody.read, nobody.delete, nobody.decide) == (("*",), Scope.OWN, Scope.OWN, ())


def test_everyone_may_be_narrowed_key_by_key(tmp_path):
    auth = load_auth(_auth(tmp_path, '[roles.everyone]\nrun = []\n\n[users.ana]\n'))
    assert (auth.users["ana"].rights.run, auth.users["ana"].rights.delete) == ((), Scope.OWN)


def test_a_users_tenant_is_kept_as_every_tenant_is_so_its_spellings_are_one(tmp_path):
    """Tenants compare as grapharc.config.tenants keeps them: case and full-width forms agree."""
    auth = load_auth(_auth(tmp_path, '[users.a]\ntenant = "ＡＣＭＥ "\n\n[users.b]\ntenant = "Acme"\n'))
    assert auth.users["a"].tenant == auth.users["b"].tenant == "acme"


def test_a_tenant_of_only_spaces_is_refused_naming_the_key(tmp_path):
    with pytest.raises(AuthFileError, match=r"users\.a\.tenant: a tenant name must not be empty"):
        load_auth(_auth(tmp_path, '[users.a]\ntenant = "  "\n'))


@pytest.mark.parametrize(("text", "says"), [
    ('[users.a]\nroles = ["auditor"]\n', "users.a.roles names role 'auditor', which [roles] does not define"),
    ('[roles.r]\nread = "everything"\n[users.a]\n', "roles.r.read must be one of 'own', 'tenant', 'all'; "
                                                    "got 'everything'"),
    ('[roles.r]\ndelete = "mine"\n[users.a]\n', "roles.r.delete must be one of 'none', 'own', 'tenant', "
                                                "'all'; got 'mine'"),
    ('[roles.r]\nrun = "waiter"\n[users.a]\n',
     "roles.r.run must be a list of non-empty strings; got 'waiter'"),
    ('[roles.r]\nmay_decide = []\n[users.a]\n', "roles.r has unknown keys may_decide"),
    ('[users.a]\nrole = ["x"]\n', "users.a has unknown keys role"),
    ('[roles.r]\nread = "tenant"\n[users.a]\nroles = ["r"]\n',
     "users.a has a role covering its tenant's threads, but no tenant"),
    ('[users.a]\ntenant = ""\n', "users.a.tenant must be a non-empty string"),
    ('[users.a]\n[sign_in]\nfailures_per_user = 0\n', "sign_in.failures_per_user must be a whole number from "
                                                      "1 to 86400; got 0"),
    ('[users.a]\n[sign_in]\nattempts = 3\n', "[sign_in] takes only failures_per_user, failures_per_address, "
                                             "window_seconds"),
    ('[users.a]\n[tokenz.ci]\n', "has unknown keys tokenz"),
    ('[jwt]\nissuer = "i"\naudience = "a"\nalgorithms = ["HS256"]\njwks_file = "k.json"\n',
     "jwt.algorithms must list some of RS256"),
    ('[jwt]\nissuer = "i"\naudience = "a"\n', "[jwt] names no key"),
    ('[jwt]\naudience = "a"\njwks_file = "k.json"\n', "jwt.issuer must be a non-empty string"),
    ('[jwt]\nissuer = "i"\naudience = "a"\njwks_file = "missing.json"\n',
     "jwt.jwks_file: cannot read missing.json"),
    ('[jwt]\nissuer = "i"\naudience = "a"\n[jwt.keys]\nk1 = "auth.toml"\n',
     "jwt.keys.k1 (auth.toml) is not a PEM public key"),
    ('[jwt]\nissuer = "i"\naudience = "a"\nsecret = "x"\n', "jwt has unknown keys secret"),
    ('[jwt]\nissuer = "i"\naudience = "a"\nleeway_seconds = 9999\n[jwt.keys]\n',
     "jwt.leeway_seconds must be a number from 0 to 300"),
], ids=["unknown-role", "read-word", "delete-word", "run-not-list", "role-key", "user-key", "no-tenant",
        "empty-tenant", "limit-zero", "limit-key", "top-key", "hs256", "no-key", "no-issuer", "no-jwks-file",
        "not-pem", "jwt-key", "leeway"])
def test_a_mistake_is_refused_naming_the_key(tmp_path, text, says):
    with pytest.raises(AuthFileError) as refused:
        load_auth(_auth(tmp_path, text))
    assert says in str(refused.value)


def test_a_jwks_whose_keys_share_a_kid_is_refused(tmp_path):
    from authz_setup import signing_keys

    signing_keys(tmp_path)
    jwks = json.loads((tmp_path / "jwks.json").read_text())
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": jwks["keys"] * 2}))
    with pytest.raises(AuthFileError) as refused:
        load_auth(_auth(tmp_path, '[jwt]\nissuer = "i"\naudience = "a"\njwks_file = "jwks.json"\n'))
    assert "jwt.jwks_file jwks.json has keys without a kid, or two with one kid" in str(refused.value)


def test_serve_refuses_a_bad_auth_file_with_one_line_and_exit_2(tmp_path):
    bad = _auth(tmp_path, '[users.a]\nroles = ["auditor"]\n')
    command = [sys.executable, "-m", "grapharc.cli", "serve", "--port", "0", "--auth-file", str(bad)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "users.a.roles names role 'auditor', which [roles] does not define" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


HASH_COUNTER = '''
import sys
import argon2

made = []
hash_password = argon2.PasswordHasher.hash
argon2.PasswordHasher.hash = lambda self, password: made.append(1) or hash_password(self, password)

import grapharc.server.api.routes, grapharc.server.app  # every API module imports grapharc.server.auth
from grapharc.server.auth import load_auth
print(len(made))
if len(sys.argv) > 1:
    auth = load_auth(__import__("pathlib").Path(sys.argv[1]))
    print(len(made), auth.sign_in("mallory", "guess"))
    auth.sign_in("nobody-either", "guess")
    print(len(made))
'''


def test_a_server_without_sign_in_hashes_no_password_and_an_auth_file_makes_the_unknown_users_hash_once(
        tmp_path):
    def hashes(*args: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", HASH_COUNTER, *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.split("\n")[:-1]

    assert hashes() == ["0"]  # was 1: an argon2 hash on import, in every serve
    path = _auth(tmp_path, '[users.alice]\npassword_hash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"\n')
    assert hashes(str(path)) == ["0", "1 None", "1"]  # made as the file is loaded, then reused
