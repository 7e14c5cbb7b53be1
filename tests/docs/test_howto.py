"""The how-to guides: every block of every guide runs, in order, and prints what the guide shows.

Each page under docs/how-to is one scenario in a fresh directory (with its own ``HOME``). A file
block (```LANG file=NAME) is written there. In a ```console block each ``$ COMMAND`` runs in bash
with the virtualenv's ``bin`` first on ``PATH``: ``export NAME=VALUE`` sets a variable for the
commands after it, a command ending in `` &`` keeps running in the background until the scenario
ends, and any other command must print what the block shows under it (standard output, then
standard error; ``...`` stands for any text within a line, a line of only ``...`` for any lines),
or, when it shows nothing, exit 0. A ```python block followed by "prints:" runs with the same
variables and must print what is shown. A block of any other kind fails the test: nothing on a
guide goes unrun. What a guide names that is this machine's own (the PostgreSQL database, port
8000, a model server's address) is replaced by what the test made for it: a fresh database, a
free port, a local OpenAI-compatible server.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from uuid import uuid4

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
HOWTO = ROOT / "docs" / "how-to"
sys.path.insert(0, str(ROOT / "tests" / "grapharc-gateway"))  # gateway_fakes: a local OpenAI server
from gateway_fakes import FakeOpenAI, Reply  # type: ignore[import-not-found]  # noqa: E402

BLOCK = re.compile(r"```(\w+)([^\n]*)\n(.*?)```\n(?:\nprints:\n\n```text\n(.*?)```\n)?", re.S)
PAGE_PORT = "8000"
PAGE_DATABASE = "postgresql://postgres@127.0.0.1:5432/grapharc"
PAGE_MODEL_SERVER = "http://127.0.0.1:8001/v1"
PATIENCE_SECONDS = 120
"""How long one command may take before the test gives up on it (a bound, never a measurement)."""
KEPT_OUT = ("OPENAI_", "OPENROUTER_", "NOVITA_", "OLLAMA_", "GRAPHARC_", "_TYPER_", "_GRAPHARC_")
"""Variables of the test's own environment a guide's commands must not see."""


# -- reading a guide -------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One thing a guide does: write a file, run a command, or run Python, and what it prints."""

    kind: str  # "file", "command" or "python"
    text: str
    expected: str = ""
    name: str = ""


def steps(page: str) -> list[Step]:
    """The steps of ``page`` (its text, with this machine's values already put in), in order."""
    found = []
    for lang, info, body, prints in BLOCK.findall(page):
        names = [word.split("=", 1)[1] for word in info.split() if word.startswith("file=")]
        if names:
            found.append(Step("file", body, name=names[0]))
        elif lang == "console":
            found += console_steps(body)
        elif lang == "python" and prints:
            found.append(Step("python", body, prints))
        else:
            raise AssertionError(f"a ```{lang}{info} block the test cannot run:\n{body}")
    return found


def console_steps(body: str) -> list[Step]:
    """Each ``$ command`` of a console block (a line ending in ``\\`` goes on) with the lines under it."""
    found: list[Step] = []
    lines = body.splitlines(keepends=True)
    while lines:
        line = lines.pop(0)
        assert line.startswith("$ "), f"a console block starts each command with '$ ': {line!r}"
        command = line[2:].rstrip("\n")
        while command.endswith("\\"):
            command = command[:-1] + lines.pop(0).strip().rstrip("\n")
            command = command.replace("  ", " ")
        shown = []
        while lines and not lines[0].startswith("$ "):
            shown.append(lines.pop(0))
        found.append(Step("command", command, "".join(shown)))
    return found


def matches(expected: str, printed: str) -> bool:
    """Whether ``printed`` is what ``expected`` shows, ``...`` standing for what changes run to run."""
    any_lines, pattern = r"(?:[^\n]*\n)*?", ""
    for line in expected.splitlines():
        pattern += any_lines if line == "..." else ".*".join(map(re.escape, line.split("..."))) + r"\n"
    return re.fullmatch(pattern, printed if printed.endswith("\n") else printed + "\n") is not None


# -- running one -------------------------------------------------------------------------------


@dataclass
class Scenario:
    """A guide followed in ``workdir``: its variables, and the commands it left running."""

    workdir: Path
    logs: Path
    env: dict[str, str]
    running: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def follow(self, step: Step) -> None:
        if step.kind == "file":
            (self.workdir / step.name).parent.mkdir(parents=True, exist_ok=True)
            (self.workdir / step.name).write_text(step.text)
        elif step.kind == "python":
            printed = self.run([sys.executable, "-c", step.text])
            assert matches(step.expected, printed.stdout), printed.stdout + printed.stderr
        elif step.text.startswith("export "):
            name, _, value = step.text.removeprefix("export ").partition("=")
            self.env[name] = " ".join(shlex.split(value))
        elif step.text.endswith(" &"):
            with (self.logs / f"background-{len(self.running)}.log").open("wb") as log:
                self.running.append(subprocess.Popen(["bash", "-c", step.text[:-2]], cwd=self.workdir,
                                                     env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                                     stderr=log))
        else:
            self.command(step)

    def command(self, step: Step) -> None:
        result = self.run(["bash", "-c", step.text])
        printed = (result.stdout + result.stderr).replace(str(self.workdir), ".")
        assert "Traceback" not in printed, printed
        if step.expected:
            assert matches(step.expected, printed), f"$ {step.text}\n{printed}"
        else:
            assert result.returncode == 0, f"$ {step.text}\n{printed}"

    def run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=self.workdir, env=self.env, capture_output=True, text=True,
                              timeout=PATIENCE_SECONDS, stdin=subprocess.DEVNULL)

    def stop(self) -> None:
        """Stop what the guide left running, as Ctrl+C would (and kill what does not stop)."""
        for process in self.running:
            process.send_signal(signal.SIGINT)
        for process in self.running:
            try:
                process.wait(timeout=PATIENCE_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def environment(home: Path) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(KEPT_OUT)}
    return {**kept, "HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{kept['PATH']}"}


@contextmanager
def following(name: str, tmp_path: Path, values: dict[str, str]) -> Iterator[Scenario]:
    """The guide ``name`` followed to its end in a fresh folder, ``values`` put in for the page's;
    what it left running still runs inside the block."""
    page = (HOWTO / name).read_text()
    for named, value in values.items():
        page = page.replace(named, value)
    for folder in ("work", "home", "logs"):
        (tmp_path / folder).mkdir()
    scenario = Scenario(tmp_path / "work", tmp_path / "logs", environment(tmp_path / "home"))
    try:
        for step in steps(page):
            scenario.follow(step)
        yield scenario
    finally:
        scenario.stop()


def free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def port_values() -> dict[str, str]:
    port = free_port()
    return {f"127.0.0.1:{PAGE_PORT}": f"127.0.0.1:{port}", f"--port {PAGE_PORT}": f"--port {port}"}


# -- the guides ------------------------------------------------------------------------------------


def test_every_guide_is_tested_here_and_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(path.name for path in HOWTO.glob("*.md"))
    assert pages == sorted(GUIDES)
    for page in pages:
        assert f": how-to/{page}" in nav, page


def test_shell_completion(tmp_path):
    with following("shell-completion.md", tmp_path, {}) as done:
        assert (done.workdir.parent / "home" / ".bash_completions" / "grapharc.sh").is_file()


def test_write_a_policy(tmp_path):
    with following("write-a-policy.md", tmp_path, {}) as done:
        assert (done.workdir / "repo" / "summary.txt").read_text() == "The notes say hello.\n"


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new database on the test PostgreSQL server (as tests/grapharc-postgres makes them), dropped after."""
    psycopg = pytest.importorskip("psycopg")
    admin = os.environ.get("GRAPHARC_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"grapharc_test_{uuid4().hex[:12]}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        if os.environ.get("GRAPHARC_REQUIRE_POSTGRES") == "1":
            raise
        pytest.skip(f"no PostgreSQL server at {admin}: {exc}")
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_deploy_on_postgresql(tmp_path):
    with fresh_database() as database, following("deploy-on-postgresql.md", tmp_path,
                                                   {PAGE_DATABASE: database, **port_values()}) as done:
        assert len(done.running) == 1


def test_put_the_inbox_behind_sign_in(tmp_path):
    values = port_values()
    with following("inbox-behind-sign-in.md", tmp_path, values) as done:
        url = "http://" + values[f"127.0.0.1:{PAGE_PORT}"]
        with httpx.Client(base_url=url, timeout=60) as browser:
            assert browser.get("/inbox", follow_redirects=False).status_code in (303, 307)
            form = browser.get("/inbox/signin")
            csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
            assert csrf is not None, form.text
            signed_in = browser.post("/inbox/signin", follow_redirects=True, data={
                "username": "alice", "password": "correct horse battery staple", "csrf": csrf.group(1),
                "next": "/inbox"})
            assert signed_in.status_code == 200 and "loan-7310" in signed_in.text, signed_in.text
        assert done.running


def test_use_a_real_model(tmp_path):
    with FakeOpenAI(required_key="sk-your-key") as server:
        server.script(
            Reply(content=None, tool_calls=[{"name": "read_file", "arguments": {"path": "notes.txt"}}],
                  prompt_tokens=200, completion_tokens=20),
            Reply(content="The notes say hello.", prompt_tokens=260, completion_tokens=8),
            Reply(content="Hello! How can I help?", prompt_tokens=9, completion_tokens=7))
        with following("use-a-real-model.md", tmp_path, {PAGE_MODEL_SERVER: server.base_url}):
            pass
        assert len(server.completions) == 3
        assert {r.headers["authorization"] for r in server.completions} == {"Bearer sk-your-key"}


GUIDES: dict[str, Callable[..., None]] = {
    "shell-completion.md": test_shell_completion,
    "write-a-policy.md": test_write_a_policy,
    "deploy-on-postgresql.md": test_deploy_on_postgresql,
    "inbox-behind-sign-in.md": test_put_the_inbox_behind_sign_in,
    "use-a-real-model.md": test_use_a_real_model,
}
"""Every guide, and the test that follows it."""
