"""Token charging through LangChain's callbacks: no cooperation from the node is needed."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any
from uuid import uuid4

import pytest
from langchain_core.callbacks import CallbackManager
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult, LLMResult
from pydantic import Field

from grapharc.runtime.budget import Budget, BudgetExceededError, BudgetMeter
from grapharc.runtime.tokens import NoUsageScopeError, charge_hand, node_usage_scope

EIGHT = {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}


class UsageModel(BaseChatModel):
    """A scripted chat model that reports fixed usage the way a real provider would."""

    usage: dict[str, int] | None = EIGHT
    response_metadata: dict[str, Any] = Field(default_factory=dict)
    llm_output: dict[str, Any] | None = None
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "usage-test"

    def _result(self) -> ChatResult:
        self.calls += 1
        message = AIMessage(
            content="ok",
            usage_metadata=self.usage,
            response_metadata=dict(self.response_metadata),
        )
        return ChatResult(generations=[ChatGeneration(message=message)], llm_output=self.llm_output)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return self._result()

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        await asyncio.sleep(0.01)  # let concurrent tasks interleave
        return self._result()


def summarise_with(model: BaseChatModel) -> str:
    """Library code that calls a model without being handed any config or callbacks."""
    return str(model.invoke([HumanMessage("summarise")]).content)


def test_a_model_call_buried_in_a_helper_is_charged_to_the_node() -> None:
    meter = BudgetMeter(Budget())
    with node_usage_scope(meter, "summarize") as usage:
        summarise_with(UsageModel())
    assert (usage.tokens, usage.input_tokens, usage.output_tokens, usage.calls) == (8, 5, 3, 1)
    assert meter.tokens == 8


def test_a_call_that_crosses_the_token_ceiling_raises_out_of_the_model_call() -> None:
    meter = BudgetMeter(Budget(max_tokens=20))
    model = UsageModel()
    with node_usage_scope(meter, "loop") as usage:
        model.invoke("one")
        model.invoke("two")
        with pytest.raises(BudgetExceededError) as caught:
            model.invoke("three")
    assert (caught.value.dimension, caught.value.used, caught.value.node) == ("tokens", 24, "loop")
    assert meter.tokens == 24
    assert usage.tokens == 24


def test_once_the_ceiling_is_reached_the_next_call_is_refused_before_it_runs() -> None:
    meter = BudgetMeter(Budget(max_tokens=16))
    model = UsageModel()
    with node_usage_scope(meter, "n"):
        model.invoke("one")
        model.invoke("two")
        with pytest.raises(BudgetExceededError):
            model.invoke("three")
    assert model.calls == 2
    assert meter.tokens == 16


def test_three_concurrent_threads_are_each_charged_only_their_own_tokens() -> None:
    meter = BudgetMeter(Budget())
    model = UsageModel()
    overlap = threading.Barrier(3)
    usages: dict[str, Any] = {}

    def worker(name: str) -> None:
        with node_usage_scope(meter, name) as usage:
            overlap.wait()
            model.invoke(name)
            overlap.wait()  # every scope is still open while the others are charged
        usages[name] = usage

    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(worker, f"w{i}")) for i in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(usage.tokens for usage in usages.values()) == [8, 8, 8]
    assert meter.tokens == 24


def test_a_thread_the_node_starts_is_charged_when_handed_the_node_callbacks() -> None:
    meter = BudgetMeter(Budget())
    model = UsageModel()
    with node_usage_scope(meter, "spawner") as usage:
        callbacks = CallbackManager.configure()  # built inside the node: carries its scope
        thread = threading.Thread(target=lambda: model.invoke("x", config={"callbacks": callbacks}))
        thread.start()
        thread.join()
    assert usage.tokens == 8
    assert meter.tokens == 8


def test_a_thread_the_node_starts_with_neither_context_nor_callbacks_is_not_charged() -> None:
    """The documented limit: such a thread is outside the node's context entirely."""
    meter = BudgetMeter(Budget())
    with node_usage_scope(meter, "spawner") as usage:
        thread = threading.Thread(target=UsageModel().invoke, args=("x",))
        thread.start()
        thread.join()
    assert usage.tokens == 0
    assert meter.tokens == 0


def test_async_tasks_are_each_charged_once_under_ainvoke() -> None:
    meter = BudgetMeter(Budget())
    model = UsageModel()

    async def worker(name: str) -> tuple[int, int]:
        with node_usage_scope(meter, name) as usage:
            await model.ainvoke(name)
        return usage.tokens, usage.calls

    async def fan_out() -> list[tuple[int, int]]:
        return await asyncio.gather(*(worker(f"t{i}") for i in range(3)))

    assert asyncio.run(fan_out()) == [(8, 1), (8, 1), (8, 1)]
    assert meter.tokens == 24


def test_a_run_reported_twice_is_charged_once() -> None:
    meter = BudgetMeter(Budget())
    result = LLMResult(generations=[[ChatGeneration(message=AIMessage("x", usage_metadata=EIGHT))]])
    with node_usage_scope(meter, "n") as usage:
        manager = CallbackManager.configure()
        (run,) = manager.on_chat_model_start({}, [[HumanMessage("hi")]], run_id=uuid4())
        run.on_llm_end(result)
        run.on_llm_end(result)
    assert (usage.tokens, usage.calls) == (8, 1)
    assert meter.tokens == 8


def test_nested_scopes_charge_only_the_innermost_node() -> None:
    meter = BudgetMeter(Budget())
    model = UsageModel()
    with node_usage_scope(meter, "outer") as outer:
        model.invoke("outer call")
        with node_usage_scope(meter, "inner") as inner:
            model.invoke("inner call")
    assert (outer.tokens, inner.tokens, meter.tokens) == (8, 8, 16)


def test_leaving_a_scope_stops_charging_it() -> None:
    meter = BudgetMeter(Budget())
    model = UsageModel()
    with node_usage_scope(meter, "n") as usage:
        model.invoke("inside")
    model.invoke("outside")
    assert usage.tokens == 8
    assert meter.tokens == 8


def test_a_scope_without_a_meter_still_records_usage() -> None:
    with node_usage_scope(None, "n") as usage:
        UsageModel().invoke("hi")
    assert usage.tokens == 8


def test_a_reported_price_is_summed_and_a_missing_one_counted_as_unpriced() -> None:
    meter = BudgetMeter(Budget())
    priced = UsageModel(response_metadata={"cost_usd": 0.25})
    with node_usage_scope(meter, "n") as usage:
        priced.invoke("a")
        priced.invoke("b")
        UsageModel().invoke("c")
    assert usage.cost_usd == pytest.approx(0.5)
    assert (usage.calls, usage.unpriced_calls) == (3, 1)
    assert meter.cost_usd == pytest.approx(0.5)
    assert meter.unpriced_calls == 1


def test_no_reported_price_leaves_the_node_cost_unknown_rather_than_zero() -> None:
    with node_usage_scope(None, "n") as usage:
        UsageModel().invoke("a")
    assert usage.cost_usd is None


def test_usage_falls_back_to_the_llm_output_envelope() -> None:
    model = UsageModel(
        usage=None,
        llm_output={
            "token_usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11},
            "cost_usd": 0.003,
        },
    )
    meter = BudgetMeter(Budget())
    with node_usage_scope(meter, "n") as usage:
        model.invoke("hi")
    assert (usage.tokens, usage.input_tokens, usage.output_tokens) == (11, 7, 4)
    assert usage.cost_usd == pytest.approx(0.003)
    assert meter.tokens == 11


def test_a_call_that_reports_no_usage_is_still_counted_as_a_call() -> None:
    with node_usage_scope(None, "n") as usage:
        UsageModel(usage=None).invoke("hi")
    assert (usage.tokens, usage.calls, usage.unpriced_calls) == (0, 1, 1)


def test_a_hand_charge_lands_on_the_current_node_and_the_meter() -> None:
    meter = BudgetMeter(Budget(max_tokens=100))
    with node_usage_scope(meter, "agent") as usage:
        charge_hand(40, 0.1)
        charge_hand(10)
        with pytest.raises(BudgetExceededError) as caught:
            charge_hand(60)
    assert caught.value.node == "agent"
    assert (usage.tokens, usage.calls, usage.unpriced_calls) == (110, 3, 2)
    assert usage.cost_usd == pytest.approx(0.1)
    assert meter.tokens == 110


def test_a_hand_charge_outside_any_node_is_refused() -> None:
    with pytest.raises(NoUsageScopeError, match="outside any node"):
        charge_hand(5)


def test_a_budget_refusal_is_reported_once_not_also_as_langchains_callback_warning(tmp_path):
    """LangChain logs "Error in <handler> callback" before re-raising; the run reports it already."""
    import subprocess
    import sys

    script = (
        "import logging\n"
        "logging.basicConfig()\n"
        "from grapharc.runtime.budget import Budget, BudgetMeter\n"
        "from grapharc.runtime.tokens import node_usage_scope\n"
        "from grapharc.testing import ScriptedChatModel\n"
        "meter = BudgetMeter(Budget(max_tokens=1))\n"
        "try:\n"
        "    with node_usage_scope(meter, 'ask'):\n"
        "        ScriptedChatModel(responses=['a long enough answer']).invoke('hi')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.stdout.strip() == "BudgetExceededError", done.stderr
    assert "callback" not in done.stderr
