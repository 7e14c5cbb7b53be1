"""``grapharc --show-completion SHELL`` prints the named shell's script whatever shell runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

MARKS = {
    "bash": "complete -o default -F _grapharc_completion grapharc",
    "zsh": "#compdef grapharc",
    "fish": "complete --command grapharc",
    "powershell": "Register-ArgumentCompleter -Native -CommandName grapharc",
    "pwsh": "Register-ArgumentCompleter -Native -CommandName grapharc",
}
"""A line only that shell's script holds."""


def grapharc(*args: str, login_shell: str = "/bin/bash") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELL": login_shell}
    return subprocess.run([sys.executable, "-m", "grapharc.cli", *args], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("shell", sorted(MARKS))
def test_the_named_shells_script_is_printed_from_another_shell(shell):
    current = "/usr/bin/fish" if shell == "bash" else "/bin/bash"
    shown = grapharc("--show-completion", shell, login_shell=current)
    assert shown.returncode == 0, shown.stderr
    assert MARKS[shell] in shown.stdout
    assert [mark for mark in MARKS.values() if mark != MARKS[shell] and mark in shown.stdout] == []


def test_an_unknown_shell_is_refused_naming_the_supported_ones():
    refused = grapharc("--show-completion", "tcsh")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "'tcsh'" in refused.stderr and "bash, zsh, fish, powershell, pwsh" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_an_unknown_shell_is_a_json_usage_error_with_json():
    refused = grapharc("--show-completion", "tcsh", "--json")
    assert refused.returncode == 2
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "UsageError" and "bash, zsh, fish, powershell, pwsh" in error["message"]


def test_without_a_shell_the_current_shells_script_is_printed():
    shown = grapharc("--show-completion", login_shell="/bin/bash")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip()
