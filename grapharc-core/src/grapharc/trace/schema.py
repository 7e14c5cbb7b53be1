"""The trace format: every event phase and field name, defined once, and its JSON Schema.

A trace is JSON Lines, one event per line. Every event names its ``phase``: a run opens
with ``run_start`` (which carries ``schema_version``) and closes with ``run_end`` (its
``status`` and ``stop_reason``); each node execution is a ``start`` closed by ``end`` (with
its ``state_delta``), ``error``, ``interrupt`` or ``parent_command``; a governance decision
is an ``admission`` event, never an ``end``, so it cannot inflate node counts; an agent's
sub-steps (``model``, ``permission``, ``tool``, ``evidence``) and a node's writes to the
long-term store (``store_write``: namespace, key, size, never the value unless asked) sit inside
their node's execution. The run and node names are those GraphARC 0.1.7's tools read.

The writer (:mod:`grapharc.trace.writer`), the kernel that calls it and every reader
(:mod:`grapharc.trace.reader` and the views of :mod:`grapharc.observe`) import the names from here;
nothing else spells them.
:func:`json_schema` derives the JSON Schema from the same table (``trace.schema.json``
beside this module is its committed copy, regenerated with ``python -m grapharc.trace.schema``).
This module imports only the standard library, so a reader pays nothing for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

SCHEMA_VERSION: Final = 1
"""The format version ``run_start`` carries; readers refuse any other."""
SUPPORTED_VERSIONS: Final = frozenset({SCHEMA_VERSION})
SCHEMA_FILE: Final = Path(__file__).with_name("trace.schema.json")

# -- phases ---------------------------------------------------------------------------------
RUN_START: Final = "run_start"
START: Final = "start"
END: Final = "end"
ERROR: Final = "error"
INTERRUPT: Final = "interrupt"
PARENT_COMMAND: Final = "parent_command"
ADMISSION: Final = "admission"
RUN_END: Final = "run_end"
MODEL_CALL: Final = "model"
PERMISSION: Final = "permission"
TOOL_CALL: Final = "tool"
EVIDENCE: Final = "evidence"
STORE_WRITE: Final = "store_write"
AGENT_PHASES: Final = frozenset({MODEL_CALL, PERMISSION, TOOL_CALL, EVIDENCE})
"""An agent node's sub-steps: inside its node execution, never executions themselves."""

CLOSING_PHASES: Final = frozenset({END, ERROR, INTERRUPT, PARENT_COMMAND})
"""Phases that close a node execution a ``start`` opened."""
RUN_PHASES: Final = frozenset({RUN_START, RUN_END})

# -- fields ---------------------------------------------------------------------------------
PHASE: Final = "phase"
TS: Final = "ts"
RUN_ID: Final = "run_id"
THREAD_ID: Final = "thread_id"
ATTEMPT: Final = "attempt"
GRAPH: Final = "graph"
NODE: Final = "node"
STEP: Final = "step"
SCHEMA_VERSION_FIELD: Final = "schema_version"
BUDGET: Final = "budget"
TENANT: Final = "tenant"
LABELS: Final = "labels"
EDGES: Final = "edges"
STATE_DELTA: Final = "state_delta"
DURATION_MS: Final = "duration_ms"
TOKENS: Final = "tokens"
INPUT_TOKENS: Final = "input_tokens"
OUTPUT_TOKENS: Final = "output_tokens"
COST_USD: Final = "cost_usd"
MODEL: Final = "model"
MODELS: Final = "models"
CALLS: Final = "calls"
EXCEPTION: Final = "exception"
EXCEPTION_TYPE: Final = "type"
EXCEPTION_MESSAGE: Final = "message"
COPY: Final = "copy"
GOTO: Final = "goto"
ROUTE: Final = "route"
ROUTE_KEY: Final = "key"
ROUTE_TO: Final = "to"
STATUS: Final = "status"
STOP_REASON: Final = "stop_reason"
ITERATIONS: Final = "iterations"
UNPRICED_CALLS: Final = "unpriced_calls"
LOOP_ID: Final = "loop_id"
ACTION: Final = "action"
ROUND: Final = "round"
READABLE: Final = "readable"
FINGERPRINT: Final = "fingerprint"
CHECKS_RUN: Final = "checks_run"
FAILED: Final = "failed"
NODES: Final = "nodes"
DEPTH: Final = "depth"
WORST_CASE: Final = "worst_case"
REJECTIONS: Final = "rejections"
EXECUTED: Final = "executed"
DETAIL: Final = "detail"
ROUNDS: Final = "rounds"
SOURCE: Final = "source"
TOOL: Final = "tool"
TOOL_CALLS: Final = "tool_calls"
CALL_ID: Final = "call_id"
DECISION: Final = "decision"
APPROVAL: Final = "approval"
RULE_ID: Final = "rule_id"
REASON: Final = "reason"
EXECUTOR: Final = "executor"
SERVER: Final = "server"
OUTCOME: Final = "outcome"
ARGS_DIGEST: Final = "args_digest"
OUTPUT_CHARS: Final = "output_chars"
REFERENCE: Final = "reference"
NAMESPACE: Final = "namespace"
KEY: Final = "key"
OPERATION: Final = "operation"
SIZE_BYTES: Final = "size_bytes"
VALUE: Final = "value"
TTL_MINUTES: Final = "ttl_minutes"

MAX_STRING_CHARS: Final = 2000
"""Strings longer than this are written cut to this length, followed by ``TRUNCATION_MARKER``."""
TRUNCATION_MARKER: Final = "…[truncated]"
REPR_KEY: Final = "__repr__"
"""The one key of the object written where a value JSON cannot hold was: ``{"__repr__": "..."}``."""
DELEGATED: Final = "delegated"
"""The ``executor`` of every event of an agent whose loop a backend ran itself (ungoverned)."""
TOOL_OUTCOMES: Final = ("ok", "error", "refused", "replayed", "timeout")
"""What became of a tool call: ran, raised, was refused (permission, arguments), was answered from
the idempotency record of an earlier attempt, or ran out of time."""
STORE_OPERATIONS: Final = ("put", "delete")
"""What a ``store_write`` event records a node doing to an item of the long-term store."""
SHARED_COPY: Final = "shared"
"""The ``copy`` value of a node that opted out of the deep copy of its input."""
ADMISSION_ACTIONS: Final = ("plan", "decision", "round", "stop")
"""What an ``admission`` event records: a planner's proposal, a verdict, a round, the loop's stop."""
COMPLETED: Final = "completed"
INTERRUPTED: Final = "interrupted"
CANCELLED: Final = "cancelled"
BUDGET_EXCEEDED: Final = "budget_exceeded"
FAILED_RUN: Final = "error"
RUN_STATUSES: Final = (COMPLETED, INTERRUPTED, CANCELLED, BUDGET_EXCEEDED, FAILED_RUN)
"""How a run ended (``run_end.status``); ``stop_reason`` says why (and is the status itself when
nothing more specific stopped it)."""


@dataclass(frozen=True)
class Field:
    """One field: its JSON Schema type and what it means."""

    schema: Mapping[str, Any]
    about: str


def _type(*names: str) -> dict[str, Any]:
    return {"type": names[0] if len(names) == 1 else list(names)}


_COUNT = {"type": "integer", "minimum": 0}
_EXCEPTION = {"type": "object", "required": [EXCEPTION_TYPE, EXCEPTION_MESSAGE],
              "properties": {EXCEPTION_TYPE: _type("string"), EXCEPTION_MESSAGE: _type("string")}}

FIELDS: Final[Mapping[str, Field]] = {
    PHASE: Field(_type("string"), "what the event records"),
    TS: Field(_type("number"), "when it was written, in seconds since the epoch"),
    RUN_ID: Field(_type("string"), "the run (one attempt of a graph on a thread, or a governed loop)"),
    THREAD_ID: Field(_type("string"), "the thread the run belongs to"),
    ATTEMPT: Field({"type": "integer", "minimum": 1}, "which attempt on the thread this run is"),
    GRAPH: Field(_type("string"), "the graph's name (a subgraph's own name inside it)"),
    NODE: Field(_type("string"), "the node executed"),
    STEP: Field(_type("integer"), "the step, rising across attempts on a thread"),
    SCHEMA_VERSION_FIELD: Field(_type("integer"), "the trace format version the writer used"),
    BUDGET: Field(_type("object"), "the run's budget ceilings (null: unlimited)"),
    TENANT: Field(_type("string", "null"), "the tenant the run was made for"),
    LABELS: Field(_type("object"), "labels given to the run in its config metadata"),
    EDGES: Field({"type": "array", "items": {"type": "array", "items": _type("string")}},
                 "the graph's declared edges as [source, target] (joins list each source)"),
    STATE_DELTA: Field(_type("object"), "the state fields the node wrote, as they landed"),
    DURATION_MS: Field({"type": "number", "minimum": 0, "maximum": 1e15}, "how long the work took"),
    TOKENS: Field(_COUNT, "tokens charged: the node's own, or the run's total on run_end"),
    INPUT_TOKENS: Field(_COUNT, "input tokens, when the provider split them"),
    OUTPUT_TOKENS: Field(_COUNT, "output tokens, when the provider split them"),
    COST_USD: Field({"type": ["number", "null"], "minimum": 0, "maximum": 1e9},
                    "what the provider reported it cost (null: nothing reported)"),
    MODEL: Field(_type("string"), "the model that was called (its spec, when built from one)"),
    MODELS: Field({"type": "object", "additionalProperties": {
        "type": "object", "required": [CALLS, TOKENS],
        "properties": {CALLS: _COUNT, TOKENS: _COUNT, INPUT_TOKENS: _COUNT, OUTPUT_TOKENS: _COUNT}}},
        "the node's model calls by model (its spec, when built from one): calls and tokens, split "
        "into input and output when the provider split them all"),
    EXCEPTION: Field(_EXCEPTION, "the exception that ended a node or a run"),
    COPY: Field({"enum": [SHARED_COPY]}, "present when the node was given the state itself, not a copy"),
    GOTO: Field({"type": "array", "items": _type("string")}, "where a returned Command(goto=) routed"),
    ROUTE: Field({"type": "object", "required": [ROUTE_KEY, ROUTE_TO],
                  "properties": {ROUTE_TO: {"type": "array", "items": _type("string")}}},
                 "a routing node's decision: the router's key(s) and the destination node(s)"),
    STATUS: Field(_type("string"), "how a run ended, or an admission verdict"),
    STOP_REASON: Field(_type("string"), "what stopped the run: a guard, a loop, a budget, an error"),
    ITERATIONS: Field(_COUNT, "node executions the run's meter charged"),
    UNPRICED_CALLS: Field(_COUNT, "model calls that reported no cost"),
    LOOP_ID: Field(_type("string"), "the governed loop an admission event belongs to"),
    ACTION: Field({"enum": list(ADMISSION_ACTIONS)}, "which governance step an admission event records"),
    ROUND: Field({"type": "integer", "minimum": 1}, "the planning round"),
    READABLE: Field(_type("boolean"), "whether the planner's reply held a proposal"),
    FINGERPRINT: Field(_type("string"), "the digest that binds a verdict to its proposal"),
    CHECKS_RUN: Field({"type": "array", "items": _type("string")}, "the admission checks that ran"),
    FAILED: Field({"type": "array", "items": _type("string")}, "the failed admission codes"),
    NODES: Field(_COUNT, "nodes in the proposal"),
    DEPTH: Field(_COUNT, "the proposal's nesting depth"),
    WORST_CASE: Field(_type("object"), "the proposal's worst-case cost per budget dimension"),
    REJECTIONS: Field({"type": "array", "items": _type("object")}, "every objection, with where and why"),
    EXECUTED: Field(_type("boolean"), "whether the round's proposal ran"),
    DETAIL: Field(_type("string"), "the stop reason in words"),
    ROUNDS: Field(_COUNT, "rounds the governed loop ran"),
    SOURCE: Field(_type("string"), "the graph file a written topology came from"),
    TOOL: Field(_type("string"), "the tool a call named"),
    TOOL_CALLS: Field(_COUNT, "tool calls the model asked for in one reply"),
    CALL_ID: Field(_type("string"), "the model's id for one tool call"),
    DECISION: Field({"enum": ["allow", "ask", "deny"]}, "what the permission policy decided"),
    APPROVAL: Field({"enum": ["approved", "refused"]}, "what became of an ask: approved, or refused "
                    "(declined, or nobody could answer)"),
    RULE_ID: Field(_type("string"), "the rule that decided (empty: no rule matched)"),
    REASON: Field(_type("string"), "why, in words"),
    EXECUTOR: Field(_type("string"), "what ran the tool (local, sandboxed, container, delegated, mcp)"),
    SERVER: Field(_type("string"), "the server a tool of a run-time source came from (an MCP server)"),
    OUTCOME: Field({"enum": list(TOOL_OUTCOMES)}, "what became of a tool call"),
    ARGS_DIGEST: Field(_type("string"), "a digest of the call's validated arguments"),
    OUTPUT_CHARS: Field(_COUNT, "characters the tool returned (before any truncation)"),
    REFERENCE: Field(_type("string"), "where an output too large to show in full was stored"),
    NAMESPACE: Field({"type": "array", "items": _type("string")}, "the long-term store namespace written"),
    KEY: Field(_type("string"), "the key of the long-term store item written"),
    OPERATION: Field({"enum": list(STORE_OPERATIONS)}, "what a node did to a long-term store item"),
    SIZE_BYTES: Field(_COUNT, "the size of the item's value as UTF-8 JSON"),
    TTL_MINUTES: Field({"type": "number", "minimum": 0}, "the item's time to live, in minutes"),
    VALUE: Field(_type("object"), "the item's value, on the trace only when the graph was compiled "
                 "to record values"),
}


@dataclass(frozen=True)
class Shape:
    """One phase: the fields it must carry and those it may carry (any other is allowed too)."""

    about: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()


_RUN: Final = (PHASE, TS, RUN_ID, THREAD_ID, ATTEMPT, GRAPH)
_NODE: Final = (*_RUN, NODE, STEP)
_SPEND: Final = (TOKENS, COST_USD)

SHAPES: Final[Mapping[str, Shape]] = {
    RUN_START: Shape("a run began", (*_RUN, SCHEMA_VERSION_FIELD, BUDGET), (TENANT, LABELS, EDGES)),
    START: Shape("a node execution began: its identity and nothing else", _NODE, (COPY,)),
    END: Shape("a node execution finished and its writes landed",
               (*_NODE, STATE_DELTA, DURATION_MS, *_SPEND),
               (COPY, GOTO, ROUTE, INPUT_TOKENS, OUTPUT_TOKENS, MODEL, MODELS)),
    ERROR: Shape("a node execution raised; none of its writes landed",
                 (*_NODE, DURATION_MS, EXCEPTION), (COPY, *_SPEND)),
    INTERRUPT: Shape("a node execution paused on an interrupt", (*_NODE, DURATION_MS)),
    PARENT_COMMAND: Shape("a node execution handed a Command to its parent graph", (*_NODE, DURATION_MS)),
    ADMISSION: Shape("a governance step: never a node execution",
                     (PHASE, TS, RUN_ID, THREAD_ID, LOOP_ID, ACTION),
                     (ROUND, READABLE, STATUS, FINGERPRINT, CHECKS_RUN, FAILED, NODES, DEPTH, WORST_CASE,
                      REJECTIONS, EXECUTED, STATE_DELTA, STOP_REASON, DETAIL, ROUNDS, SOURCE, *_SPEND)),
    MODEL_CALL: Shape("an agent node called its model (a sub-step: its spend is on the node's end)",
                      (*_NODE, DURATION_MS), (*_SPEND, INPUT_TOKENS, OUTPUT_TOKENS, MODEL, TOOL_CALLS,
                                              EXECUTOR)),
    PERMISSION: Shape("an agent node's permission decision on one tool call",
                      (*_NODE, TOOL, DECISION, REASON), (APPROVAL, RULE_ID, CALL_ID, EXECUTOR)),
    TOOL_CALL: Shape("an agent node's tool call: what ran it and what became of it",
                     (*_NODE, TOOL, CALL_ID, OUTCOME, DURATION_MS),
                     (EXECUTOR, SERVER, ARGS_DIGEST, EXCEPTION, OUTPUT_CHARS, REFERENCE)),
    EVIDENCE: Shape("an agent node's check of its answer before it leaves", (*_NODE, STATUS, DETAIL),
                    (EXECUTOR,)),
    STORE_WRITE: Shape("a node put or deleted an item of the long-term store (a sub-step, not an "
                       "execution)", (*_NODE, NAMESPACE, KEY, OPERATION), (SIZE_BYTES, VALUE, TTL_MINUTES)),
    RUN_END: Shape("a run ended: how, why, and what its meter charged",
                   (*_RUN, STATUS, STOP_REASON, ITERATIONS, *_SPEND, UNPRICED_CALLS, DURATION_MS),
                   (TENANT, LABELS, EXCEPTION)),
}


def _numeric_rules() -> dict[str, tuple[bool, bool, float | None, float | None]]:
    """(integer only, null allowed, minimum, maximum) of every numeric field, read off ``FIELDS``."""
    rules = {}
    for name, field in FIELDS.items():
        kinds = field.schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or ())
        if "integer" in kinds or "number" in kinds:
            rules[name] = ("number" not in kinds, "null" in kinds, field.schema.get("minimum"),
                           field.schema.get("maximum"))
    return rules


_NUMERIC_RULES: Final = _numeric_rules()
_INF: Final = float("inf")


def damaged_field(event: Mapping[str, Any]) -> str | None:
    """What is wrong with the first numeric field of ``event`` that breaks the schema, if any.

    Readers sum these fields, so a negative, non-finite, non-numeric or absurdly large one (two
    of which would sum to infinity) would corrupt a total; a reader reports the line as damaged.
    Every reader calls this on every line, so it walks the event's own items once and takes an
    in-range integer or float in a few comparisons.
    """
    rules = _NUMERIC_RULES
    for name, value in event.items():
        rule = rules.get(name)
        if rule is None:
            continue
        integer, nullable, minimum, maximum = rule
        kind = type(value)
        if kind is int or (kind is float and not integer and -_INF < value < _INF):
            if (minimum is None or value >= minimum) and (maximum is None or value <= maximum):
                continue
            if minimum is not None and value < minimum:
                return f"{name} is {value!r}, below its minimum {minimum}"
            return f"{name} is {value!r}, above its maximum {maximum:g}"
        if value is None and nullable:
            continue
        return f"{name} is {value!r}, not {'an integer' if integer else 'a finite number'}"
    return None


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one trace line, derived from ``SHAPES`` and ``FIELDS``."""
    variants = []
    for phase, shape in SHAPES.items():
        properties = {name: dict(FIELDS[name].schema, description=FIELDS[name].about)
                      for name in (*shape.required, *shape.optional)}
        properties[PHASE] = {"const": phase, "description": FIELDS[PHASE].about}
        variants.append({"title": phase, "description": shape.about, "type": "object",
                         "required": list(shape.required), "properties": properties})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:grapharc:trace-event:v{SCHEMA_VERSION}",
        "title": f"GraphARC trace event, format version {SCHEMA_VERSION}",
        "description": "One line of a GraphARC JSONL trace. Fields not listed are allowed.",
        "oneOf": variants,
    }


def schema_text() -> str:
    """``json_schema()`` as the text committed in ``trace.schema.json``."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(SCHEMA_FILE)
