"""cost: per run, thread and node; recorded and estimated kept apart; agreement with metrics."""

from __future__ import annotations

import pytest

from grapharc.observe.cost import Rate, RateCard, cost
from grapharc.observe.errors import RateCardError, UnknownRunError
from grapharc.observe.metrics import metrics

CARD = RateCard(default=Rate(per_million=2.0), models={"mock/big": Rate(per_million=10.0)})


def mixed_trace(builder):
    """Two runs on one thread, one on another; fan-out, admission, outside-node calls, costs."""
    b = builder
    b.run_start("r1", thread="t1")
    b.node("r1", "plan", 1, thread="t1", tokens=1000, cost_usd=0.01)
    for _ in range(3):
        b.start("r1", "worker", 2, thread="t1")
    for tokens in (100, 200, 300):
        b.end("r1", "worker", 2, thread="t1", tokens=tokens)
    b.add("model_call", "r1", thread="t1", node=None, tokens=500, cost_usd=0.02, model="mock/big")
    b.add("admission", "r1", thread="t1", action="round", node=None, state_delta={"round_tokens": 7777})
    b.run_end("r1", thread="t1", tokens=2100)
    b.run_start("r2", thread="t1", attempt=2).node("r2", "plan", 1, thread="t1", attempt=2, tokens=50)
    b.run_start("r3", thread="t2").node("r3", "plan", 1, thread="t2", tokens=4, cost_usd=0.5)
    return b.write()


def test_recorded_cost_sums_only_what_providers_reported(builder):
    report = cost(mixed_trace(builder), "r1").to_document()
    total = report["total"]
    assert total["tokens"] == 2100
    assert total["recorded_cost_usd"] == pytest.approx(0.03)
    assert total["recorded_events"] == 2
    assert total["unrecorded_tokens"] == 600
    assert total["estimated_cost_usd"] is None and "unpriced_tokens" not in total
    assert report["nodes"]["worker"]["recorded_cost_usd"] is None


def test_a_rate_card_estimates_every_token_without_touching_the_recorded_figure(builder):
    report = cost(mixed_trace(builder), "r1", rate_card=CARD).to_document()
    total = report["total"]
    assert total["estimated_cost_usd"] == pytest.approx((1600 * 2.0 + 500 * 10.0) / 1e6)
    assert total["recorded_cost_usd"] == pytest.approx(0.03)
    assert report["outside_nodes"]["estimated_cost_usd"] == pytest.approx(500 * 10.0 / 1e6)


def test_tokens_the_card_has_no_rate_for_are_counted_as_unpriced(builder):
    card = RateCard(models={"mock/big": Rate(per_million=10.0)})
    total = cost(mixed_trace(builder), "r1", rate_card=card).to_document()["total"]
    assert total["unpriced_tokens"] == 1600
    assert total["estimated_cost_usd"] == pytest.approx(500 * 10.0 / 1e6)


def test_split_tokens_are_priced_at_input_and_output_rates(builder):
    builder.run_start("r").add("model_call", "r", node=None, model="m",
                               tokens=300, input_tokens=200, output_tokens=100)
    card = RateCard(models={"m": Rate(per_million=99.0, input_per_million=1.0, output_per_million=4.0)})
    total = cost(builder.write(), "r", rate_card=card).to_document()["total"]
    assert total["estimated_cost_usd"] == pytest.approx((200 * 1.0 + 100 * 4.0) / 1e6)


def test_spend_is_broken_down_per_run_thread_and_node(builder):
    path = mixed_trace(builder)
    run = cost(path, "r1").to_document()
    assert run["threads"] == {"t1": {**run["threads"]["t1"], "runs": 2, "tokens": 2150}}
    assert {name: line["tokens"] for name, line in run["nodes"].items()} == {"plan": 1000, "worker": 600}
    everything = cost(path).to_document()
    assert {rid: line["tokens"] for rid, line in everything["runs"].items()} == \
        {"r1": 2100, "r2": 50, "r3": 4}
    assert {tid: line["tokens"] for tid, line in everything["threads"].items()} == {"t1": 2150, "t2": 4}
    assert everything["nodes"]["plan"]["tokens"] == 1054
    assert everything["total"]["tokens"] == 2154


def test_metrics_and_cost_agree_on_every_total(builder):
    path = mixed_trace(builder)
    for run in ("r1", "r2", "r3"):
        seen, spent = metrics(path, run).to_document(), cost(path, run).to_document()
        assert seen["tokens"]["total"] == spent["total"]["tokens"]
        assert seen["tokens"]["outside_nodes"] == spent["outside_nodes"]["tokens"]
        assert {n: v["tokens"] for n, v in seen["nodes"].items()} == \
            {n: v["tokens"] for n, v in spent["nodes"].items()}
        assert seen["recorded_cost_usd"] == spent["total"]["recorded_cost_usd"]
    everything = metrics(path).to_document()["total"]["tokens"]["total"]
    assert everything == cost(path).to_document()["total"]["tokens"] == 2154


def test_an_unknown_run_is_reported_by_id(builder):
    with pytest.raises(UnknownRunError):
        cost(mixed_trace(builder), "nope")


def test_a_rate_card_is_read_from_toml(tmp_path):
    path = tmp_path / "rates.toml"
    path.write_text('[default]\nper_million = 2\n[models."openai/gpt-4o-mini"]\n'
                    "input_per_million = 0.15\noutput_per_million = 0.6\n")
    card = RateCard.from_toml(path)
    assert card.default == Rate(per_million=2.0)
    assert card.models["openai/gpt-4o-mini"] == Rate(input_per_million=0.15, output_per_million=0.6)
    assert card.source == str(path)


@pytest.mark.parametrize(("text", "words"), [
    ("[default]\nper_milion = 1\n", r"\[default\] has unknown key\(s\) \['per_milion'\]"),
    ("[default]\nper_million = -1\n", r"\[default\] per_million must be a number of US dollars per "
                                     r"million tokens at least 0 and at most 1e6, got -1"),
    ("[default]\nper_million = 1e308\n", r"per_million must be .* at most 1e6, got 1e\+308"),
    ("[default]\nper_million = nan\n", r"per_million must be a number .*, got nan"),
    ('[models."x"]\nper_million = "cheap"\n', r'\[models."x"\] per_million must be a number of'),
    ("[default]\n", r"\[default\] names no rate"),
    ("currency = 'EUR'\n", r"unknown key\(s\) \['currency'\]"),
    ("[default\n", "not valid TOML"),
])
def test_a_bad_rate_card_names_the_file_and_the_key(tmp_path, text, words):
    path = tmp_path / "rates.toml"
    path.write_text(text)
    with pytest.raises(RateCardError, match=words) as caught:
        RateCard.from_toml(path)
    assert str(caught.value).startswith(str(path))


def test_a_missing_rate_card_is_named(tmp_path):
    with pytest.raises(RateCardError, match="no such rate card"):
        RateCard.from_toml(tmp_path / "absent.toml")


def test_spend_outside_any_run_is_its_own_line_and_part_of_the_total(builder):
    builder.run_start("r").node("r", "a", 1, tokens=2)
    builder.events.append({"phase": "admission", "action": "plan", "tokens": 30,
                           "ts": 1.0})
    document = cost(builder.write()).to_document()
    assert list(document["runs"]) == ["r"] and list(document["threads"]) == ["thread-r"]
    assert document["outside_runs"]["tokens"] == 30 and document["total"]["tokens"] == 32


def test_a_models_breakdown_prices_each_model_at_its_own_rate_and_the_rest_at_the_default(builder):
    builder.run_start("r").end("r", "ask", 1, tokens=1500, models={
        "mock/big": {"calls": 2, "tokens": 1000, "input_tokens": 800, "output_tokens": 200},
        "mock/small": {"calls": 1, "tokens": 300}})
    card = RateCard(default=Rate(per_million=2.0),
                    models={"mock/big": Rate(input_per_million=1.0, output_per_million=4.0)})
    document = cost(builder.write(), "r", rate_card=card).to_document()
    big, small, unnamed = (800 * 1.0 + 200 * 4.0) / 1e6, 300 * 2.0 / 1e6, 200 * 2.0 / 1e6
    assert document["total"]["estimated_cost_usd"] == pytest.approx(big + small + unnamed)
    assert [(line["model"], line["calls"], line["tokens"]) for line in document["models"]] == \
        [("mock/big", 2, 1000), ("mock/small", 1, 300), (None, 0, 200)]


def test_the_models_a_card_cannot_price_are_named_with_their_calls(builder):
    from grapharc.observe.render import render_cost

    builder.run_start("r").end("r", "ask", 1, tokens=700, models={
        "mock/big": {"calls": 1, "tokens": 400}, "mock/small": {"calls": 3, "tokens": 300}})
    card = RateCard(models={"mock/big": Rate(per_million=1.0)})
    text = render_cost(cost(builder.write(), "r", rate_card=card).to_document())
    assert text.splitlines()[-1] == "no rate on the card for: mock/small (3 call(s), 300 tokens)"


@pytest.mark.parametrize("breakdown", [
    {"mock/big": {"calls": 1, "tokens": 5000}},  # claims more tokens than the event has
    {"mock/big": {"calls": -1, "tokens": 10}},
    {"mock/big": "lots"},
    {"mock/big": {"calls": 1, "tokens": 1.5}},
])
def test_a_damaged_breakdown_prices_the_event_as_tokens_of_no_model(builder, breakdown):
    builder.run_start("r").end("r", "ask", 1, tokens=100, models=breakdown)
    document = cost(builder.write(), "r", rate_card=CARD).to_document()
    assert document["total"]["estimated_cost_usd"] == pytest.approx(100 * 2.0 / 1e6)
    assert [(line["model"], line["tokens"]) for line in document["models"]] == [(None, 100)]
