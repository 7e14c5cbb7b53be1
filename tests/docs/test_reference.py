"""The reference pages: every key the loaders accept is documented as it is, and every example runs.

Each page under docs/reference is a scenario: its file blocks (```LANG file=NAME) are
written to one fresh directory and read by the real loader (``refused`` ones must be
refused), its ```console blocks run the real CLI there and must print what is shown
(stdout, then stderr, the directory shown as ``.``), and a ```python block followed by
"prints:" runs there too. Its key tables (``<!-- keys: NAME -->``) must list exactly the
keys of the schema behind them, with the same type and default.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from grapharc import config
from grapharc.errors import ConfigurationError, GraphARCError
from grapharc.observe.cost import CARD_KEYS, RATE_KEYS, RateCard
from grapharc.observe.errors import RateCardError, TraceVersionError
from grapharc.planner import admission
from grapharc.planner.graph_file import read_graph_file
from grapharc.planner.proposal import ProposalError, ProposedEdge, ProposedNode, Subgraph
from grapharc.policy.engine import PolicyDocumentError, PolicyEngine
from grapharc.policy.files import PolicyLoadError
from grapharc.policy.schema import EdgeRuleDoc, NodeRuleDoc, PolicyDocument, SpendRuleDoc, ToolRuleDoc
from grapharc.trace.reader import TraceReader

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
GENERATED = {"cli.md", "http-api.md", "python.md"}
"""Pages the docs site renders from the code (tests/docs/test_site.py checks them), not scenarios."""
PAGES = sorted(path.name for path in REFERENCE.glob("*.md") if path.name not in GENERATED)
BLOCK = re.compile(r"```(\w+)([^\n]*)\n(.*?)```\n(?:\nprints:\n\n```text\n(.*?)```\n)?", re.S)
TABLE = re.compile(r"<!-- (keys|codes): (\S+) -->\n((?:\|[^\n]*\n)+)")


@dataclass(frozen=True)
class Block:
    lang: str
    attributes: dict[str, str]
    flags: frozenset[str]
    body: str
    prints: str | None


def blocks(page: str) -> list[Block]:
    found = []
    for lang, info, body, prints in BLOCK.findall((REFERENCE / page).read_text()):
        words = info.split()
        found.append(Block(lang, dict(w.split("=", 1) for w in words if "=" in w),
                           frozenset(w for w in words if "=" not in w), body, prints or None))
    return found


def tables(page: str, sort: str) -> dict[str, dict[str, list[str]]]:
    """``name -> {first cell: other cells}`` for each marked table of ``page``."""
    found = {}
    for kind, name, text in TABLE.findall((REFERENCE / page).read_text()):
        if kind == sort:
            rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
                    for line in text.splitlines()[2:]]
            found[name] = {row[0].strip("`"): row[1:] for row in rows}
    return found


# -- loaders ---------------------------------------------------------------------------------


def _read_trace(path: Path) -> None:
    reader = TraceReader(path)
    assert list(reader) and not reader.warnings()


def _load_config(path: Path) -> None:
    config.load_config({}, config=path, cwd=path.parent, env={})


Loader = tuple[Callable[[Path], Any], tuple[type[GraphARCError], ...]]
GRAPH: Loader = (read_graph_file, (ProposalError,))
LOADERS: dict[str, dict[str, Loader]] = {
    "config.md": {"toml": (_load_config, (ConfigurationError,))},
    "graph-files.md": {"json": GRAPH},
    "policy.md": {"json": GRAPH, "toml": (PolicyEngine.from_file, (PolicyLoadError, PolicyDocumentError))},
    "rate-cards.md": {"jsonl": (_read_trace, ()), "toml": (RateCard.from_toml, (RateCardError,))},
    "trace-stores.md": {"jsonl": (_read_trace, (TraceVersionError,))},
}


def test_every_reference_page_is_checked_here_and_linked_from_the_readme():
    assert sorted(LOADERS) == PAGES
    readme = (ROOT / "README.md").read_text()
    for page in PAGES:
        assert f"(docs/reference/{page})" in readme, page


# -- examples ---------------------------------------------------------------------------------


def grapharc(command: str, cwd: Path) -> str:
    assert command.startswith("grapharc "), command
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHARC_")}
    result = subprocess.run([sys.executable, "-m", "grapharc", *shlex.split(command)[1:]],
                            capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert "Traceback" not in result.stderr, result.stderr
    return (result.stdout + result.stderr).replace(str(cwd), ".")


def run_python(code: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(cwd)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "reference example", "exec"), {"__name__": "reference_example"})
    return out.getvalue()


@pytest.mark.parametrize("page", PAGES)
def test_every_example_of_the_page_loads_runs_and_prints_what_it_shows(page, tmp_path, monkeypatch):
    workdir = tmp_path.resolve()
    seen = {"files": 0, "refused": 0, "commands": 0}
    for block in blocks(page):
        if "file" in block.attributes:
            path = workdir / block.attributes["file"]
            path.write_text(block.body)
            load, errors = LOADERS[page][block.lang]
            seen["files"] += 1
            if "refused" in block.flags:
                seen["refused"] += 1
                with pytest.raises(errors):
                    load(path)
            else:
                load(path)
        elif block.lang == "console":
            command, _, expected = block.body.partition("\n")
            assert command.startswith("$ "), command
            assert grapharc(command[2:], workdir) == expected, command
            seen["commands"] += 1
        elif block.lang == "python":
            assert block.prints is not None, "a python example shows what it prints"
            assert run_python(block.body, workdir, monkeypatch) == block.prints
    assert seen["files"] >= 2 and seen["refused"] >= 1 and seen["commands"] >= 2, seen


# -- keys against the schemas ------------------------------------------------------------------


def type_word(annotation: Any, mapping: str) -> str:
    """The word a page uses for a field's type: string, integer, number, array, object/table."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (annotation,) = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    origin = typing.get_origin(annotation)
    if annotation is str or origin is typing.Literal or (
            isinstance(annotation, type) and issubclass(annotation, Enum)):
        return "string"
    if origin is list:
        return "array"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return mapping
    return {int: "integer", float: "number", bool: "boolean"}[annotation]


def default_word(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return f"`{json.dumps(field.default_factory())}`"  # type: ignore[call-arg]
    return "none" if field.default is None else f"`{json.dumps(field.default)}`"


def schema_rows(model: type[BaseModel], mapping: str, only: set[str] | None = None) -> dict[str, list[str]]:
    return {name: [type_word(field.annotation, mapping), default_word(field)]
            for name, field in model.model_fields.items() if only is None or name in only}


RULES = (NodeRuleDoc, EdgeRuleDoc, ToolRuleDoc, SpendRuleDoc)
COMMON = set.intersection(*(set(rule.model_fields) for rule in RULES))


PER_COMMAND = {"registry", "trace", "sessions", "memory", "max_tokens", "max_iterations"}
"""Settings whose default differs by command (see grapharc.governed.settings.BUILT_INS and the demos)."""


def setting_type(key: config.Key) -> str:
    """What a setting's parser accepts: a list, any text, a fraction, or only whole numbers."""
    for word, probe in (("list", ["text"]), ("string", "text"), ("number", "1.5"), ("integer", "2")):
        with contextlib.suppress(ValueError):
            key.parse(probe)
            return word
    raise AssertionError(key)


def setting_default(name: str) -> str:
    if name in PER_COMMAND:
        return "per command"
    return f"`{json.dumps(config.DEFAULTS[name])}`" if name in config.DEFAULTS else "none"


def expected_tables() -> dict[str, dict[str, dict[str, list[str]]]]:
    node = schema_rows(ProposedNode, "object")
    node["kind"][1] = "`name`"  # the validator fills the kind in from the name
    policy = {"document": schema_rows(PolicyDocument, "table"),
              "rule": schema_rows(NodeRuleDoc, "table", COMMON)}
    policy.update({rule.model_fields["resource"].annotation.__args__[0]:  # type: ignore[union-attr]
                   schema_rows(rule, "table", set(rule.model_fields) - COMMON) for rule in RULES})
    return {
        "config.md": {"settings": {name: [setting_type(key), setting_default(name)]
                                   for name, key in config.KEYS.items()}},
        "graph-files.md": {"graph-file": {**schema_rows(Subgraph, "object"), "input": ["object", "`{}`"]},
                           "node": node, "edge": schema_rows(ProposedEdge, "object")},
        "policy.md": policy,
        "rate-cards.md": {"card": {key: ["table", "none"] for key in CARD_KEYS},
                          "rate": {key: ["number", "none"] for key in RATE_KEYS}},
        "trace-stores.md": {},
    }


@pytest.mark.parametrize("page", PAGES)
def test_the_key_tables_list_every_key_with_its_type_and_default(page):
    documented = tables(page, "keys")
    expected = expected_tables()[page]
    assert sorted(documented) == sorted(expected)
    for name, rows in expected.items():
        assert {key: cells[:2] for key, cells in documented[name].items()} == rows, name
        assert all(cells[2] for cells in documented[name].values()), f"{name}: a key without a meaning"


def admission_codes() -> dict[str, str]:
    """Every rejection code admission can produce, with its check."""
    source = Path(admission.__file__).read_text()
    codes = dict((code, check) for check, code in re.findall(r'reject\(\s*"(\w+)",\s*"(\w+)"', source))
    suffixes = re.findall(r'f"\{resource\}_(\w+)"', source)
    resources = {"node": "kinds", "edge": "edges", "spend": "budget"}
    assert set(re.findall(r'_refusal\([^()]*"(\w+)"\)', source)) == set(resources)
    codes.update({f"{resource}_{suffix}": check for resource, check in resources.items()
                  for suffix in suffixes})
    return codes


def test_every_admission_rejection_code_is_documented_with_its_check():
    documented = {code: cells[0] for code, cells in tables("graph-files.md", "codes")["admission"].items()}
    assert documented == admission_codes()
