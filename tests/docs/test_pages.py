"""The README's and the site's promises: every code block runs and prints what its page shows.

Each page (the README and every page of docs/ but the reference pages, whose scenarios
tests/docs/test_reference.py runs) is a scenario: its blocks run in order in one empty folder,
with ``grapharc`` on PATH as in the virtualenv the pages activate and no provider key set.

- ```` ```python ````: executed; when followed by ``prints...:`` and a ```` ```text ```` block,
  its stdout must be that text. With ``server=MODULE:FUNCTION`` it runs against a fresh
  ``grapharc serve`` of that registry, whose address replaces ``http://127.0.0.1:8000``.
- ```` ```console ````: ``$ grapharc ...`` runs the command; its stdout must be the rest.
- ```` ```sh ```` / ```` ```bash ````: run by ``bash -e -o pipefail``; it must exit 0.
- ``file=NAME``: the block is written to ``NAME`` for the blocks after it.
- ``checked=TEST``: the test file named runs the block (it must exist and name the page).
- ``skip="reason"``: not run; skips are few and each says why.

Any other block that is not a ```` ```text ```` output must be written, checked or skipped, so a
new kind of block gets a decision rather than going unrun.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import tomllib
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from grapharc.cli.main import build_app
from grapharc.planner.surface import registry_from_plugins
from grapharc.plugins.host import core_requirement
from grapharc.testing import in_process_source, plugin_host

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RUN_ELSEWHERE = {"reference": "tests/docs/test_reference.py", "how-to": "tests/docs/test_howto.py",
                 "plugins": "tests/docs/test_plugin_guides.py"}
"""Folders of docs/ whose pages another test runs as scenarios of its own, by that test."""
PAGES = ["README.md", *sorted(path.relative_to(ROOT).as_posix() for path in DOCS.rglob("*.md")
                              if path.relative_to(DOCS).parts[0] not in {*RUN_ELSEWHERE, "hooks"})]
README_LIMIT_BYTES = 12 * 1024
"""The README is a landing page: what GraphARC is, the two commands, one example, a map."""
MAX_SKIPS = 10
"""Blocks the tests may leave unrun (a deployment, a paid model), each with its reason."""
SERVER_URL = "http://127.0.0.1:8000"
"""Where a page's SDK example looks for the server it started."""
RUNNABLE = {"python", "console", "sh", "bash"}
OUTPUT = "text"

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>\w+)(?P<info>[^\n]*)\n"
                   r"(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
PRINTS = re.compile(r"\s*prints[^\n]*:\s*")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    attributes: dict[str, str]
    body: str
    prints: str | None = field(default=None)

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.lang})"


def dedented(match: re.Match[str]) -> str:
    """A fence's body without the indentation of its fence (a block inside a list item)."""
    indent = len(match.group("indent"))
    return "".join(line[indent:] for line in match.group("body").splitlines(keepends=True))


def blocks(page: str) -> list[Block]:
    """The page's fenced blocks in order, each python block paired with the output it prints."""
    text = (ROOT / page).read_text()
    found = list(FENCE.finditer(text))
    result: list[Block] = []
    outputs: set[int] = set()
    for index, match in enumerate(found):
        if index in outputs:
            continue
        following = found[index + 1] if index + 1 < len(found) else None
        prints = None
        if (match.group("lang") == "python" and following is not None and following.group("lang") == OUTPUT
                and PRINTS.fullmatch(text[match.end():following.start()])):
            prints = dedented(following)
            outputs.add(index + 1)
        words = shlex.split(match.group("info"))
        attributes = dict(word.split("=", 1) for word in words if "=" in word)
        line = text.count("\n", 0, match.start()) + 1
        result.append(Block(page, line, match.group("lang"), attributes, dedented(match), prints))
    return result


def every_block() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


# -- running a page --------------------------------------------------------------------------


def environment() -> dict[str, str]:
    """This environment with the virtualenv's scripts first on PATH, no GraphARC setting and no
    provider key: a page's reader after ``source .venv/bin/activate`` on a fresh machine."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("GRAPHARC_") and not name.endswith("_API_KEY")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return env


@contextlib.contextmanager
def served(registry: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The URL of a fresh ``grapharc serve`` of ``registry`` over sessions in ``folder``."""
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "grapharc-server"))
    from server_process import serving  # type: ignore[import-not-found]

    with serving(folder / "served-sessions", "--registry", registry) as server:
        yield str(server.json_announcement()["url"]).rstrip("/")


def run_python(block: Block, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = block.body
    with contextlib.ExitStack() as stack:
        if "server" in block.attributes:
            url = stack.enter_context(served(block.attributes["server"], folder.parent, monkeypatch))
            code = code.replace(SERVER_URL, url)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(block), "exec"), {"__name__": "__main__"})
    if block.prints is not None:
        assert out.getvalue() == block.prints, f"{block} printed something else"


def run_console(block: Block, folder: Path) -> None:
    command, _, shown = block.body.partition("\n")
    assert command.startswith("$ grapharc "), f"{block}: a console block starts with $ grapharc ..."
    result = subprocess.run([sys.executable, "-m", "grapharc.cli", *shlex.split(command[2:])[1:]],
                            capture_output=True, text=True, cwd=folder, env=environment(), timeout=120,
                            stdin=subprocess.DEVNULL)
    assert result.stdout == shown, f"{block}: {result.stderr}"


def run_shell(block: Block, folder: Path) -> None:
    result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.body], capture_output=True,
                            text=True, cwd=folder, env=environment(), timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"{block} exited {result.returncode}: {result.stderr[-2000:]}"


def run(block: Block, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run, write or check ``block`` as the module docstring says; a skipped one is left."""
    if "skip" in block.attributes:
        return
    if "checked" in block.attributes:
        checker = ROOT / block.attributes["checked"]
        assert checker.is_file() and block.page in checker.read_text(), f"{block}: {checker} does not read it"
    elif "file" in block.attributes:
        (folder / block.attributes["file"]).write_text(block.body)
    elif block.lang == "python":
        run_python(block, folder, monkeypatch)
    elif block.lang == "console":
        run_console(block, folder)
    elif block.lang in {"sh", "bash"}:
        run_shell(block, folder)
    else:
        assert block.lang == OUTPUT, f"{block}: neither run, written (file=), checked (checked=) nor skipped"


def page_params() -> list[object]:
    return [pytest.param(page, marks=pytest.mark.smoke) if page == "README.md" else page for page in PAGES]


@pytest.mark.parametrize("page", page_params())
def test_every_block_of_the_page_runs_and_prints_what_it_shows(page, tmp_path, monkeypatch):
    folder = tmp_path / "reader"
    folder.mkdir()
    monkeypatch.chdir(folder)
    for name, value in environment().items():
        monkeypatch.setenv(name, value)
    for name in set(os.environ) - set(environment()):
        monkeypatch.delenv(name)
    for block in blocks(page):
        run(block, folder, monkeypatch)


# -- what the blocks are ----------------------------------------------------------------------


def test_the_pages_have_blocks_to_run_and_every_page_is_read():
    found = every_block()
    assert {page for page in PAGES} >= {"README.md", "docs/getting-started.md", "docs/concepts/http-api.md"}
    run_here = [b for b in found if b.lang in RUNNABLE and not {"skip", "checked"} & set(b.attributes)]
    assert len(run_here) >= 20 and sum(b.prints is not None for b in run_here) >= 10
    for folder, runner in RUN_ELSEWHERE.items():
        assert (DOCS / folder).is_dir() and (ROOT / runner).is_file(), folder


def test_skips_are_few_and_each_says_why():
    skipped = [block for block in every_block() if "skip" in block.attributes]
    assert len(skipped) <= MAX_SKIPS, [str(block) for block in skipped]
    for block in skipped:
        assert len(block.attributes["skip"].split()) >= 3, f"{block}: say why it cannot run"


def test_a_block_that_is_neither_run_nor_marked_fails(tmp_path, monkeypatch):
    unmarked = Block("docs/x.md", 1, "toml", {}, "a = 1\n")
    with pytest.raises(AssertionError, match="neither run"):
        run(unmarked, tmp_path, monkeypatch)


def test_a_python_block_that_prints_something_else_fails(tmp_path, monkeypatch):
    wrong = Block("docs/x.md", 1, "python", {}, "print('a')\n", "b\n")
    with pytest.raises(AssertionError, match="printed something else"):
        run(wrong, tmp_path, monkeypatch)


def test_fence_attributes_and_outputs_are_read(tmp_path):
    page = tmp_path / "page.md"
    page.write_text('```python\nprint(1)\n```\n\nprints, here:\n\n```text\n1\n```\n\n'
                    '  ```sh skip="needs a real model key"\n  grapharc agent x\n  ```\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys.modules[__name__], "ROOT", tmp_path)
        first, second = blocks("page.md")
    assert (first.lang, first.body, first.prints) == ("python", "print(1)\n", "1\n")
    assert (second.lang, second.attributes, second.body) == ("sh", {"skip": "needs a real model key"},
                                                             "grapharc agent x\n")


# -- the README -------------------------------------------------------------------------------


README = (ROOT / "README.md").read_text()


@pytest.mark.smoke
def test_the_readme_is_a_landing_page():
    assert len(README.encode()) <= README_LIMIT_BYTES
    for page in PAGES[1:]:
        if page != "docs/index.md":
            assert f"({page})" in README, f"the README's map does not link {page}"


@pytest.mark.smoke
@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_two_commands_a_page_gives_are_make_targets_that_exist(page):
    """``make demo`` and ``make test`` are not run here (the suite is one of them): the targets are
    checked to exist, and ``make test`` to be what CI runs."""
    text = (ROOT / page).read_text()
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo", "test"):
        assert f"make {target}" in text
        assert re.search(rf"^{target}: ", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "source .venv/bin/activate" in text and "Python 3.11" in text


def test_no_message_or_page_sends_a_reader_to_a_section_of_the_readme():
    """The README is a landing page: its old sections live on the site's pages now."""
    pointers = re.compile(r"the README'?s? [\w\"]|section of the README|in the README", re.I)
    sources = [*ROOT.glob("grapharc-*/src/**/*.py"), *DOCS.rglob("*.md")]
    stale = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path in sources
             for match in pointers.finditer(path.read_text())]
    assert not stale


# -- sections other tests read ----------------------------------------------------------------


def section(page: str, heading: str) -> str:
    """The text of ``page`` under ``heading``, to the next heading of its level."""
    level = heading.split(" ", 1)[0]
    return (ROOT / page).read_text().split(f"\n{heading}\n", 1)[1].split(f"\n{level} ", 1)[0]


def first_block(text: str, language: str) -> str:
    return re.search(rf"```{language}[^\n]*\n(.*?)```", text, re.S).group(1)


def test_the_write_your_own_plugin_example_registers_its_kind_and_command():
    plugin = section("docs/concepts/plugins.md", "## Write your own plugin")
    module = types.ModuleType("docs_plugin")
    exec(compile(first_block(plugin, "python"), "plugins.md", "exec"), module.__dict__)
    requires = core_requirement(tomllib.loads(first_block(plugin, "toml"))["project"]["dependencies"])
    with plugin_host(in_process_source(module, name="my-grapharc-plugin", core_requires=requires),
                     installed=False) as host:
        assert host.records["my-grapharc-plugin"].status == "loaded"
        spec = registry_from_plugins().get("lookup")
        body = spec.factory(spec)
        assert body(types.SimpleNamespace(goal="q")) == {"answer": "looked up q"}
        result = CliRunner().invoke(build_app(), ["hello"])
        assert result.exit_code == 0 and result.output == "hello from my plugin\n"


def test_the_approval_story_prints_exactly_what_the_sessions_page_shows(tmp_path):
    story = section("docs/concepts/sessions.md", "## The approval demo")
    command = re.search(r"```sh\n(grapharc demo approval run [^#\n]*?)\s+#", story).group(1)
    shown = re.search(r"The first command prints each step and stops[^\n]*\n\n```text\n(.*?)```",
                      story, re.S).group(1)
    result = subprocess.run([sys.executable, "-m", "grapharc", *command.split()[1:]],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    approval = re.compile(r"ap-[0-9a-f]{12}")
    assert approval.sub("ap-ID", result.stdout) == approval.sub("ap-ID", shown)


def test_the_site_shows_a_file_name_as_a_title_and_leaves_the_tests_words_out():
    spec = importlib.util.spec_from_file_location("fence_attributes", DOCS / "hooks" / "fence_attributes.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = ('```sh skip="needs a real model key"\nx\n```\n```python server=a.b:c\nx\n```\n'
            '```toml file=policy.toml refused\nx\n```\n')
    assert hook.on_page_markdown(page).splitlines()[::3] == [
        "```sh", "```python", '```toml title="policy.toml (refused)"']
