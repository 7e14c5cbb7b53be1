"""Configured secrets are redacted: which variables count, how values are replaced, and the trace belt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from pydantic import BaseModel

from grapharc.governed.settings import resolve_config
from grapharc.harness.executors import LocalExecutor, ToolFailedError
from grapharc.harness.redacting import RedactingExecutor
from grapharc.harness.tools import Tool
from grapharc.redaction import Redactor, current_redactor, mark_secret_names, register_secret, secret_names
from grapharc.trace.encoding import MAX_STRING_CHARS
from grapharc.trace.writer import TraceWriter

KEY = "sk-planted-5b0f2c61d3a94e7f"
MARK = "[redacted:OPENAI_API_KEY]"


def test_provider_keys_suffixes_and_the_operators_list_are_secrets_and_short_values_are_not():
    environ = {"OPENAI_API_KEY": KEY, "GITHUB_TOKEN": "ghp_0123456789", "MY_DB": "hunter2hunter2",
               "GRAPHARC_SECRET_ENV": "MY_DB, OTHER", "PATH": "/usr/bin", "SHORT_TOKEN": "abc"}
    assert secret_names(environ) == ["GITHUB_TOKEN", "MY_DB", "OPENAI_API_KEY", "SHORT_TOKEN"]
    redactor = current_redactor(environ)
    assert redactor.redact(f"a {KEY} b hunter2hunter2 abc /usr/bin") == \
        f"a {MARK} b [redacted:MY_DB] abc /usr/bin"


def test_the_secret_env_setting_marks_variables_for_the_rest_of_the_process(tmp_path, monkeypatch):
    monkeypatch.setenv("SITE_PASSPHRASE", "correct horse battery")
    (tmp_path / "grapharc.toml").write_text('[grapharc]\nsecret_env = "SITE_PASSPHRASE"\n')
    assert "SITE_PASSPHRASE" not in secret_names()
    resolve_config("agent", {}, cwd=tmp_path)
    assert current_redactor().redact("say correct horse battery") == "say [redacted:SITE_PASSPHRASE]"


def test_values_are_found_written_or_json_escaped_and_scrubbed_deep_without_copying_clean_data():
    quoted = 'pa"ss\\word-0123'
    redactor = Redactor({quoted: "DB_PASSWORD"})
    line = json.dumps({"text": f"x {quoted} y"}).encode()
    assert redactor.found_in(line)
    assert redactor.redact(json.dumps(quoted)) == '"[redacted:DB_PASSWORD]"'
    clean = {"a": ["b", ("c",)]}
    assert redactor.scrub(clean) is clean
    assert redactor.scrub({"k": [1, (quoted,)], quoted: None}) == \
        {"k": [1, ("[redacted:DB_PASSWORD]",)], "[redacted:DB_PASSWORD]": None}


def test_a_value_registered_later_is_redacted_by_a_writer_opened_earlier(tmp_path):
    writer = TraceWriter(tmp_path / "t.jsonl")
    late = "registered-later-7f3a9c"
    register_secret(late, "DOTENV_KEY")
    writer.emit({"phase": "note", "detail": f"it said {late}"})
    writer.close()
    assert late not in (tmp_path / "t.jsonl").read_text()
    assert "[redacted:DOTENV_KEY]" in (tmp_path / "t.jsonl").read_text()


class Holder(BaseModel):
    text: str


class Opaque:
    def __repr__(self) -> str:
        return "o" * (MAX_STRING_CHARS - 12) + KEY


@pytest.mark.parametrize("value", [
    pytest.param(f"plain {KEY}", id="string"),
    pytest.param([ToolMessage(content=f"out: {KEY}", tool_call_id="1")], id="message"),
    pytest.param(Holder(text=KEY), id="model"),
    pytest.param("x" * (MAX_STRING_CHARS - 12) + KEY, id="cut-at-the-limit"),
    pytest.param(Opaque(), id="repr-cut-at-the-limit"),
    pytest.param({KEY: 1}, id="key"),
])
def test_the_trace_writer_never_writes_a_secret_whole_or_cut(tmp_path, monkeypatch, value):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with TraceWriter(tmp_path / "t.jsonl") as writer:
        writer.end("r", "t", 1, "g", "n", 1, state_delta={"messages": value}, duration_ms=1.0, tokens=0,
                   cost_usd=None)
    text = (tmp_path / "t.jsonl").read_text()
    assert KEY[:8] not in text
    json.loads(text)


def leak(workspace: str, what: str) -> dict[str, str]:
    return {"found": what}


def fail(workspace: str, what: str) -> None:
    raise ValueError(f"bad {what}")


class WhatArgs(BaseModel):
    what: str


def test_the_executor_wrapper_redacts_results_and_error_messages_before_anyone_keeps_them(tmp_path,
                                                                                         monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    executor = RedactingExecutor(LocalExecutor())
    assert executor.name == "local"
    found = executor.run(Tool("leak", "leak", WhatArgs, leak), {"what": KEY}, workspace=tmp_path)
    assert found == {"found": MARK}
    with pytest.raises(ToolFailedError) as raised:
        executor.run(Tool("fail", "fail", WhatArgs, fail), {"what": KEY}, workspace=tmp_path)
    assert KEY not in str(raised.value) and MARK in str(raised.value) and "ValueError" in str(raised.value)
    with pytest.raises(ValueError, match="bad clean"):
        executor.run(Tool("fail", "fail", WhatArgs, fail), {"what": "clean"}, workspace=Path(tmp_path))


def test_the_process_redactor_is_made_again_only_when_a_secret_may_have_changed(monkeypatch):
    made: list[object] = []
    init = Redactor.__init__

    def counted(self, secrets):
        made.append(self)
        init(self, secrets)

    monkeypatch.setattr(Redactor, "__init__", counted)
    first = current_redactor()
    assert current_redactor() is first and len(made) <= 1  # nothing changed: the same one, none made

    monkeypatch.setenv("PLANTED_API_KEY", "planted-value-0001")
    assert current_redactor().redact("x planted-value-0001") == "x [redacted:PLANTED_API_KEY]"
    monkeypatch.setenv("PLANTED_API_KEY", "planted-value-0002")
    assert current_redactor().redact("x planted-value-0001 planted-value-0002") == \
        "x planted-value-0001 [redacted:PLANTED_API_KEY]"
    monkeypatch.setenv("PLANTED_PLAIN", "planted-value-0003")
    assert current_redactor().redact("x planted-value-0003") == "x planted-value-0003"
    monkeypatch.setattr("grapharc.redaction._marked", set())
    mark_secret_names(["PLANTED_PLAIN"])
    assert current_redactor().redact("x planted-value-0003") == "x [redacted:PLANTED_PLAIN]"
    monkeypatch.delenv("PLANTED_API_KEY")
    assert current_redactor().redact("x planted-value-0002") == "x planted-value-0002"
    monkeypatch.setattr("grapharc.redaction._registered", {})
    register_secret("planted-value-0004", "PLANTED_REGISTERED")
    assert current_redactor().redact("x planted-value-0004") == "x [redacted:PLANTED_REGISTERED]"
    kept = current_redactor()
    assert current_redactor() is kept
