"""Keys come from the environment or ./.env only; a missing one names its variable."""

from __future__ import annotations

import pytest

from grapharc.gateway import MissingCredentialError, get_model
from grapharc.gateway.credentials import credential, read_dotenv


def test_a_missing_key_is_a_clear_error_naming_the_variable():
    with pytest.raises(MissingCredentialError) as raised:
        get_model("openrouter/anthropic/claude-haiku-4.5")
    assert str(raised.value) == "OPENROUTER_API_KEY is not set"
    assert "OPENROUTER_API_KEY" in raised.value.hint and "parent directories" in raised.value.hint


def test_a_dotenv_in_the_working_directory_is_read(clean_environment, fake_openai):
    dotenv = f"OPENAI_API_KEY=from-dotenv\nOPENAI_BASE_URL={fake_openai.base_url}\n"
    (clean_environment / ".env").write_text(dotenv)
    get_model("openai/gpt-4o-mini").invoke("hi")
    assert fake_openai.completions[-1].headers["authorization"] == "Bearer from-dotenv"


def test_a_dotenv_in_a_parent_directory_is_not_read(clean_environment, monkeypatch):
    (clean_environment / ".env").write_text("NOVITA_API_KEY=from-the-parent\n")
    child = clean_environment / "project"
    child.mkdir()
    monkeypatch.chdir(child)
    with pytest.raises(MissingCredentialError, match="NOVITA_API_KEY"):
        get_model("novita/deepseek/deepseek-v3")


def test_the_environment_beats_the_dotenv(clean_environment, monkeypatch):
    (clean_environment / ".env").write_text("OPENAI_API_KEY=from-file\n")
    monkeypatch.setenv("OPENAI_API_KEY", "from-environment")
    assert credential("OPENAI_API_KEY") == "from-environment"


def test_env_file_names_another_file_explicitly(tmp_path):
    elsewhere = tmp_path / "secrets.env"
    elsewhere.write_text("OPENROUTER_API_KEY=named\n")
    model = get_model("openrouter/x/y", env_file=elsewhere)
    assert model.openai_api_key.get_secret_value() == "named"


def test_ollama_needs_no_key_at_all():
    assert get_model("ollama/llama3.1").openai_api_key.get_secret_value() == "no-key-needed"


def test_dotenv_lines_may_be_exported_quoted_or_commented(tmp_path):
    path = tmp_path / ".env"
    path.write_text("# keys\nexport A=1\nB='two words'\nC=\"x # not a comment\"\n"
                    "D=plain # comment\n\nnoise\n")
    assert read_dotenv(path) == {"A": "1", "B": "two words", "C": "x # not a comment", "D": "plain"}
