"""The trace format is defined once: the committed JSON Schema is generated, and no reader or
writer spells an event name or field name itself."""

from __future__ import annotations

import ast
from pathlib import Path

import jsonschema
import pytest

from grapharc.trace import schema as ts

PACKAGE = Path(ts.__file__).parent.parent
NAMES = {*ts.FIELDS, *ts.SHAPES}
EVENT_VARIABLES = {"event", "e", "held", "end", "error", "run_end", "run_start"}


def test_the_committed_json_schema_is_the_one_the_module_generates() -> None:
    assert ts.SCHEMA_FILE.read_text(encoding="utf-8") == ts.schema_text()


def test_every_field_a_phase_names_is_in_the_field_table() -> None:
    named = {name for shape in ts.SHAPES.values() for name in (*shape.required, *shape.optional)}
    assert named <= set(ts.FIELDS)
    assert set(ts.FIELDS) - named == set(), "a field no phase uses is dead"


def test_the_schema_accepts_a_kernel_end_event_and_refuses_an_end_without_its_delta() -> None:
    validator = jsonschema.Draft202012Validator(ts.json_schema())
    end = {"phase": "end", "ts": 1.0, "run_id": "r", "thread_id": "t", "attempt": 1, "graph": "g",
           "node": "n", "step": 1, "state_delta": {}, "duration_ms": 0.5, "tokens": 0, "cost_usd": None}
    validator.validate(end)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({key: value for key, value in end.items() if key != "state_delta"})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({**end, "event": "end", "phase": "finished"})


def _library_modules() -> list[Path]:
    return [path for path in PACKAGE.rglob("*.py") if path != PACKAGE / "trace" / "schema.py"]


def _event_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """String keys read off a variable that holds a trace event: ``event["node"]``, ``e.get("x")``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args):
            target, key = node.func.value, node.args[0]
        else:
            continue
        holder = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
        if holder in EVENT_VARIABLES and isinstance(key, ast.Constant) and key.value in NAMES:
            found.append((node.lineno, key.value))
    return found


def test_no_library_module_reads_an_event_field_by_a_literal_name() -> None:
    offenders = {str(path.relative_to(PACKAGE)): reads for path in _library_modules()
                 if (reads := _event_reads(ast.parse(path.read_text(encoding="utf-8"))))}
    assert offenders == {}


def test_the_trace_writer_and_the_run_lifecycle_spell_no_phase_names() -> None:
    phases = set(ts.SHAPES)
    for name in ("trace/writer.py", "runtime/lifecycle.py", "runtime/node.py", "runtime/route_trace.py",
                 "planner/events.py", "observe/tally.py", "observe/viz.py"):
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        literals = {node.value for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and isinstance(node.value, str)}
        assert literals & phases == set(), name


