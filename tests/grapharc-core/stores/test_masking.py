"""Every credential a store URI can carry is masked wherever the URI is shown, by one helper:
a userinfo password, and password-like query parameters however their names are spelled."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grapharc.stores.masking import credentials, masked, scrubbed

pytestmark = pytest.mark.smoke


@pytest.mark.parametrize(("uri", "shown"), [
    ("postgresql://app:s3cret@db:5432/x", "postgresql://app:***@db:5432/x"),
    ("postgresql:app:s3cret@db/x", "postgresql:app:***@db/x"),  # split_uri drops the // anyway
    ("postgresql://app:s3/cr@t@db/x", "postgresql://app:***@db/x"),  # unencoded / and @ in it
    ("postgresql://app@db/x?password=s3cret", "postgresql://app@db/x?password=***"),
    ("postgresql://app@db/x?sslmode=require&sslpassword=s3cret&connect_timeout=5",
     "postgresql://app@db/x?sslmode=require&sslpassword=***&connect_timeout=5"),
    ("postgresql://app@db/x?%70assword=s3cret", "postgresql://app@db/x?%70assword=***"),  # libpq decodes it
    ("postgresql://app@db/x?PASSWORD=s3cret", "postgresql://app@db/x?PASSWORD=***"),
    ("postgresql://app@db/x?token=a&secret=b&key=c&api_key=d&client_secret=e&passfile=f",
     "postgresql://app@db/x?token=***&secret=***&key=***&api_key=***&client_secret=***&passfile=***"),
    ("postgresql://app:@db/x", "postgresql://app:***@db/x"),
    ("postgresql://u:p@[::1/db", "postgresql://u:***@[::1/db"),  # malformed: masked, never raised on
])
def test_each_credential_form_is_masked(uri, shown):
    assert masked(uri) == shown


@pytest.mark.parametrize("uri", [
    "postgresql://app@db:5432/x?sslmode=require&application_name=w1", "sqlite:/var/lib/grapharc/sessions",
    "memory:", "file:traces/run.jsonl", "ladybug:claims.lbug", "/plain/path",
])
def test_a_uri_without_credentials_is_shown_as_written(uri):
    assert masked(uri) == uri and credentials(uri) == []


@given(st.text(min_size=1))
def test_any_password_percent_encoded_in_the_userinfo_or_the_query_is_masked(password):
    encoded = quote(password, safe="")
    assert masked(f"postgresql://app:{encoded}@db/x") == "postgresql://app:***@db/x"
    assert masked(f"postgresql://app@db/x?password={encoded}") == "postgresql://app@db/x?password=***"


@given(st.text())
def test_masking_never_raises(text):
    assert isinstance(masked(text), str) and isinstance(scrubbed(text, text), str)


def test_a_message_repeating_the_uri_or_a_credential_of_it_is_scrubbed():
    uri = "postgresql://app:pa%zzss@db/x?sslpassword=t0ken%21"
    said = f'invalid percent-encoded token: "pa%zzss" in URI: "{uri}"; key t0ken! refused'
    assert scrubbed(said, uri) == ('invalid percent-encoded token: "***" in URI: '
                                   '"postgresql://app:***@db/x?sslpassword=***"; key *** refused')
