"""``grapharc cost``: spend per run, thread and node; recorded and estimated never mixed.

``recorded_cost_usd`` is the sum of the ``cost_usd`` the provider reported on the trace
(None when no event carried one) and ``unrecorded_tokens`` the tokens it does not cover.
``estimated_cost_usd`` prices *every* token against a ``RateCard`` you supply, with
``unpriced_tokens`` for tokens the card has no rate for. Neither figure is ever filled in
from the other. Tokens are counted by the same ``Tally`` ``metrics`` uses, so the two agree.
Each model's tokens (the ``models`` breakdown the kernel writes on a node's ``end``) are priced at
that model's rate, and the report lists every model with its calls, so the calls a card leaves
unpriced are counted and named.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grapharc.config.values import PRICE_PER_MILLION
from grapharc.observe.errors import NoEventsError, RateCardError, UnknownRunError
from grapharc.observe.grouping import parse_grouping
from grapharc.observe.ledger import Ledger, total_usage
from grapharc.observe.tally import ModelUsage, Tally, Usage
from grapharc.trace.reader import TraceReader

CARD_KEYS = ("default", "models")
RATE_KEYS = ("per_million", "input_per_million", "output_per_million")


@dataclass(frozen=True, slots=True)
class Rate:
    """USD per million tokens: a blended ``per_million``, and/or input and output rates."""

    per_million: float | None = None
    input_per_million: float | None = None
    output_per_million: float | None = None

    def price(self, total: int, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """The price of the tokens, split-priced when both split and rates are known, else blended."""
        if input_tokens is not None and output_tokens is not None and \
                self.input_per_million is not None and self.output_per_million is not None:
            return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1e6
        if self.per_million is not None:
            return total * self.per_million / 1e6
        return None


@dataclass(frozen=True)
class RateCard:
    """Rates by model spec, with a default for events that name no model (or an unlisted one).

    TOML form (``--rate-card FILE``)::

        [default]
        per_million = 2.0
        [models."openai/gpt-4o-mini"]
        per_million = 0.4
        input_per_million = 0.15
        output_per_million = 0.6
    """

    default: Rate | None = None
    models: Mapping[str, Rate] = field(default_factory=dict)
    source: str = "api"

    def estimate(self, model: str | None, total: int, input_tokens: int | None,
                 output_tokens: int | None) -> float | None:
        """The estimated price of one event's tokens, or None if no rate applies."""
        rate = self.models.get(model) if model is not None else None
        if rate is None:
            rate = self.default
        return None if rate is None else rate.price(total, input_tokens, output_tokens)

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> RateCard:
        """Read a rate card file; errors name the file and the offending key."""
        where = Path(path)
        try:
            data = tomllib.loads(where.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RateCardError(f"{where}: no such rate card file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RateCardError(f"{where}: cannot be read ({exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise RateCardError(f"{where}: not valid TOML ({exc})") from None
        return cls.from_mapping(data, source=str(where))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "api") -> RateCard:
        """Build a card from ``{"default": {...}, "models": {spec: {...}}}``."""
        unknown = set(data) - set(CARD_KEYS)
        if unknown:
            raise RateCardError(f"{source}: unknown key(s) {sorted(unknown)}",
                                hint="a rate card has a [default] table and [models.\"SPEC\"] tables")
        default = _rate(data["default"], f"{source}: [default]") if "default" in data else None
        models = data.get("models", {})
        if not isinstance(models, Mapping):
            raise RateCardError(f"{source}: [models] must be a table of model specs")
        rates = {str(spec): _rate(value, f'{source}: [models."{spec}"]') for spec, value in models.items()}
        return cls(default, rates, source)


def _rate(value: Any, where: str) -> Rate:
    if not isinstance(value, Mapping):
        raise RateCardError(f"{where} must be a table of rates")
    unknown = set(value) - set(RATE_KEYS)
    if unknown:
        raise RateCardError(f"{where} has unknown key(s) {sorted(unknown)}",
                            hint=f"the keys are {', '.join(RATE_KEYS)} (USD per million tokens)")
    for key, number in value.items():
        try:
            PRICE_PER_MILLION(number)
        except ValueError as exc:
            raise RateCardError(f"{where} {key} {exc}, got {number!r}") from None
    if not value:
        raise RateCardError(f"{where} names no rate", hint=f"set one of {', '.join(RATE_KEYS)}")
    return Rate(**{key: float(number) for key, number in value.items()})


@dataclass
class CostReport:
    """Spend of one run (with its thread and nodes) or of every run, thread and node in a trace."""

    path: str
    run_id: str | None
    rate_card: RateCard | None
    total: Usage
    nodes: dict[str, Usage]
    outside_nodes: Usage
    threads: dict[Any, tuple[int, Usage]]
    runs: dict[Any, Usage]
    groups: dict[str, Usage] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def line(self, usage: Usage) -> dict[str, Any]:
        """One bucket's figures, recorded and estimated side by side, never summed together."""
        line: dict[str, Any] = {
            "tokens": usage.tokens,
            "recorded_cost_usd": usage.recorded_cost_usd if usage.recorded_events else None,
            "recorded_events": usage.recorded_events,
            "unrecorded_tokens": usage.unrecorded_tokens,
            "estimated_cost_usd": usage.estimated_cost_usd if self.rate_card is not None else None,
        }
        if self.rate_card is not None:
            line["unpriced_tokens"] = usage.unpriced_tokens
        return line

    def model_line(self, model: str | None, usage: ModelUsage) -> dict[str, Any]:
        """One model's calls and tokens in the report's scope (``model`` None: no model named)."""
        line: dict[str, Any] = {"model": model, "calls": usage.calls, "tokens": usage.tokens,
                                "estimated_cost_usd": usage.estimated_cost_usd if self.rate_card else None}
        if self.rate_card is not None:
            line["unpriced_tokens"] = usage.unpriced_tokens
        return line

    def to_document(self) -> dict[str, Any]:
        """The JSON document ``grapharc cost --json`` prints."""
        document: dict[str, Any] = {
            "ok": True, "path": self.path, "run_id": self.run_id,
            "rate_card": self.rate_card.source if self.rate_card is not None else None,
            "total": self.line(self.total),
            "threads": {tid: {"runs": runs, **self.line(usage)}
                        for tid, (runs, usage) in self.threads.items() if tid is not None},
            "nodes": {name: self.line(usage) for name, usage in self.nodes.items()},
            "outside_nodes": self.line(self.outside_nodes),
            "models": [self.model_line(model, usage) for model, usage in _named_first(self.total.models)],
        }
        if self.run_id is None:
            document["runs"] = {run_id: self.line(usage) for run_id, usage in self.runs.items()
                                if run_id is not None}
            if None in self.runs:  # events no run claims, such as a governed loop's decisions
                document["outside_runs"] = self.line(self.runs[None])
        if self.groups:
            document["groups"] = {key: self.line(usage) for key, usage in self.groups.items()}
        if self.warnings:
            document["warnings"] = self.warnings
        return document


def _named_first(models: dict[str | None, ModelUsage]) -> list[tuple[str | None, ModelUsage]]:
    """The models by name, then the share of no named model (if any)."""
    named = sorted((model, usage) for model, usage in models.items() if model is not None)
    return [*named, *([(None, models[None])] if None in models else [])]


def cost(path: str | os.PathLike[str], run_id: str | None = None, *, rate_card: RateCard | None = None,
         by: str | None = None) -> CostReport:
    """Spend in the trace at ``path``: of ``run_id`` (and its thread), or of every run if None."""
    grouping = parse_grouping(by) if by is not None else None
    reader = TraceReader(path)
    price = rate_card.estimate if rate_card is not None else None
    ledger = Ledger(price, grouping, group_run=run_id).feed(reader)
    if not ledger.runs:
        raise NoEventsError(f"{reader.name}: holds no events", hint="is the run still starting?")
    threads = ledger.threads()
    if run_id is not None:
        run = ledger.runs.get(run_id)
        if run is None:
            raise UnknownRunError(reader.name, run_id)
        scope: list[Tally] = [run]
        threads = {run.thread_id: threads[run.thread_id]}
    else:
        scope = list(ledger.runs.values())
    nodes: dict[str, Usage] = {}
    outside = Usage()
    for tally in scope:
        for name, stats in tally.nodes.items():
            nodes.setdefault(name, Usage()).merge(stats.usage)
        outside.merge(tally.outside)
    return CostReport(
        path=reader.name, run_id=run_id, rate_card=rate_card, total=total_usage(scope), nodes=nodes,
        outside_nodes=outside,
        threads={tid: (len(runs), total_usage(runs)) for tid, runs in threads.items()},
        runs={rid: tally.usage for rid, tally in ledger.runs.items()} if run_id is None else {},
        groups={key: tally.usage for key, tally in ledger.groups.items()},
        warnings=reader.warnings(),
    )
