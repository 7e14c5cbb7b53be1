"""``grapharc serve`` and its auth file: off loopback it refuses to start without one, and a
file it cannot use is one error naming what is wrong, never a traceback."""

from __future__ import annotations

import json

import pytest
from server_process import ServerProcess, grapharc_serve


def serve_fails(*options: str) -> dict:
    with ServerProcess(grapharc_serve("--port", "0", "--json", *options)) as server:
        assert server.wait() == 2
    assert "Traceback" not in server.stderr
    return json.loads(server.stdout)


def test_a_non_loopback_address_without_an_auth_file_is_refused(tmp_path):
    error = serve_fails("--host", "0.0.0.0", "--sessions", str(tmp_path))
    assert error["error"]["code"] == "AuthRequiredError"
    assert "refusing to serve on 0.0.0.0 without sign-in" in error["error"]["message"]
    assert "--auth-file" in error["error"]["hint"]


def test_an_auth_file_naming_a_token_for_nobody_is_refused(tmp_path):
    auth = tmp_path / "auth.toml"
    auth.write_text('[users.alice]\npassword_hash = "$argon2id$x"\n\n'
                    '[tokens.ci]\nsha256 = "00"\nuser = "mallory"\n', encoding="utf-8")
    error = serve_fails("--auth-file", str(auth), "--sessions", str(tmp_path))
    assert error["error"]["code"] == "AuthFileError"
    assert "token 'ci' acts as user 'mallory', who is not in [users]" in error["error"]["message"]


def test_an_auth_file_that_is_not_toml_is_refused(tmp_path):
    auth = tmp_path / "auth.toml"
    auth.write_text("users = [", encoding="utf-8")
    error = serve_fails("--auth-file", str(auth))
    assert error["error"]["code"] == "AuthFileError" and "is not TOML" in error["error"]["message"]


def test_the_credentials_helper_prints_hashes_the_auth_file_accepts(tmp_path):
    import subprocess
    import sys

    from argon2 import PasswordHasher

    from grapharc.server.auth import load_auth
    from grapharc.server.errors import BearerRefused

    def helper(*argv: str, given: str = "") -> str:
        done = subprocess.run([sys.executable, "-m", "grapharc.server.credentials", *argv], input=given,
                              capture_output=True, text=True, check=True)
        return done.stdout

    password_hash = helper("password", given="s3cret words\n").strip()
    assert PasswordHasher().verify(password_hash, "s3cret words")
    token, digest = (line.split()[1] for line in helper("token").splitlines())
    auth = tmp_path / "auth.toml"
    auth.write_text(f'[users.ana]\npassword_hash = "{password_hash}"\n\n'
                    f'[tokens.ci]\nsha256 = "{digest}"\nuser = "ana"\n', encoding="utf-8")
    loaded = load_auth(auth)
    assert loaded.sign_in("ana", "s3cret words") is not None and loaded.sign_in("ana", "nope") is None
    assert loaded.bearer(f"Bearer {token}").name == "ana"
    with pytest.raises(BearerRefused, match="not an API token of this server's auth file"):
        loaded.bearer("Bearer other")
