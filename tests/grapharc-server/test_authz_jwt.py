"""Bearer JWTs beside the auth file's API tokens, against a real ``grapharc serve``: tokens minted
here with PyJWT and keys made here (RSA in a JWKS file, EC in a PEM file); issuer, audience,
expiry and signature are checked and each refusal is a 401 saying which; the user, roles and
tenant come from the token's claims."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from authz_setup import AUDIENCE, HERE, SigningKeys, authz_server, client, new_thread, signing_keys
from cryptography.hazmat.primitives.asymmetric import rsa


@dataclass
class Served:
    url: str
    keys: SigningKeys


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("jwt")
    keys = signing_keys(tmp)
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("PYTHONPATH", HERE)
        with authz_server(tmp, extra=keys.table) as url:
            yield Served(url, keys)


def _refusal(served: Served, token: str) -> str:
    with client(served.url, token=token) as api:
        answer = api.post("/threads/search", json={})
    assert answer.status_code == 401, answer.text
    assert answer.headers["www-authenticate"] == "Bearer"
    return str(answer.json()["detail"])


def test_a_valid_jwt_acts_as_the_user_and_roles_its_claims_name(served):
    with client(served.url, token=served.keys.token(sub="erin", roles=[])) as erin, \
            client(served.url, token=served.keys.token(sub="fay", roles="admin")) as fay, \
            client(served.url, token=served.keys.token(sub="gus", roles=["admin", "not-a-role"])) as gus, \
            client(served.url, "alice") as alice:
        mine = new_thread(erin)
        assert [t["thread_id"] for t in erin.post("/threads/search", json={}).json()] == [mine]
        assert mine in {t["thread_id"] for t in fay.post("/threads/search", json={}).json()}  # admin
        assert gus.get(f"/threads/{mine}").status_code == 200  # a role the file lacks is skipped
        assert alice.get(f"/threads/{mine}").status_code == 200  # erin's tenant claim: acme
        assert '"owner": "erin"' in erin.get(f"/threads/{mine}/trace").text


def test_a_jwt_signed_with_the_ec_key_of_the_pem_file_is_accepted(served):
    token = served.keys.token(kid="ec-1", key=served.keys.ec, algorithm="ES256", sub="hal", roles=[])
    with client(served.url, token=token) as hal:
        assert hal.post("/threads/count", json={}).json() == 0


@pytest.mark.parametrize(("claims", "says"), [
    ({"exp": 1_000_000}, "the JWT has expired (its exp has passed)"),
    ({"iss": "https://elsewhere.example/"}, "the JWT's issuer (iss) is not 'https://login.example.test/'"),
    ({"aud": "another-service"}, f"the JWT's audience (aud) is not {AUDIENCE!r}"),
    ({"exp": None}, "the JWT has no 'exp' claim, which this server requires"),
    ({"sub": None}, "the JWT's 'sub' claim does not name a user"),
], ids=["expired", "wrong-issuer", "wrong-audience", "no-expiry", "no-user"])
def test_a_jwt_failing_a_check_is_refused_401_saying_which(served, claims, says):
    assert _refusal(served, served.keys.token(**claims)) == says


def test_a_jwt_signed_by_another_key_is_refused_401_for_its_signature(served):
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert _refusal(served, served.keys.token(key=stranger)) == \
        "the JWT's signature does not verify with the key it names"


def test_a_jwt_naming_an_unknown_key_is_refused_401_naming_the_kid(served):
    assert _refusal(served, served.keys.token(kid="rotated-away")) == \
        "the JWT's key id (kid) 'rotated-away' is not a key this server knows"
    assert _refusal(served, served.keys.token(kid=None)) == \
        "the JWT names no key (kid) and this server has 2 keys"


def test_a_jwt_of_an_algorithm_not_accepted_is_refused_401(served):
    forged = served.keys.token(algorithm="HS256", key="a shared secret that is 32 bytes!")
    assert _refusal(served, forged) == \
        "the JWT is signed with 'HS256', which this server does not accept (it accepts RS256, ES256)"


def test_a_bearer_token_that_is_neither_kind_is_refused_401_saying_so(served):
    assert _refusal(served, "not-a-token") == \
        "the bearer token is not an API token of this server's auth file"
    assert _refusal(served, "a.b.c") == \
        "the bearer token is neither an API token of the auth file nor a JWT"


def test_the_static_tokens_still_work_beside_jwts(served):
    with client(served.url, "dave") as dave:
        assert dave.post("/threads/count", json={}).status_code == 200


def test_the_inbox_json_takes_a_jwt_too(served):
    with client(served.url, token=served.keys.token(sub="alice", roles=[])) as alice:
        listed = alice.get("/inbox/pending.json")
    assert listed.status_code == 200 and listed.json()["user"] == "alice"


def test_keys_and_claims_come_from_the_auth_file_relative_to_it(tmp_path: Path):
    from grapharc.server.auth import load_auth

    keys = signing_keys(tmp_path)
    auth = tmp_path / "auth.toml"
    auth.write_text('[users.alice]\ntenant = "acme"\nmay_decide = ["g/*"]\n' + keys.table)
    verified = load_auth(auth).bearer(f"Bearer {keys.token(sub='alice', roles=[], tenant=None)}")
    assert (verified.name, verified.tenant, verified.rights.decide) == ("alice", "acme", ("g/*",))
