"""Stage 1, one earned loop: discover -> act -> verify -> repeat, until a guard says stop.

``discover`` gathers the task, its checks and the feedback so far into a prompt; ``act``
asks the model for a candidate; ``verify`` runs the checks in code and asks a
``ProgressGuard`` whether another round is earned. The router after ``verify`` reads only
the recorded stop reason. Two independent brakes sit under the 100-iteration budget: a
no-progress window (three rounds that do not beat the best result) and a round cap. An
impossible task trips the first within a few rounds; a task that keeps improving without
ever finishing trips the second.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from grapharc.examples.demo_choices import Task
from grapharc.examples.demo_outcome import Check, StageOutcome
from grapharc.examples.demo_runs import RunRecord, run_record
from grapharc.examples.demo_support import (
    SCRIPTED_LABEL,
    ask,
    demo_model,
    first_integer,
    new_thread_id,
    run_to_end,
    thread_config,
)
from grapharc.runtime.budget import Budget
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.progress import ProgressGuard, StopReason
from grapharc.runtime.state import GraphARCState

TITLE = "one earned loop: discover -> act -> verify -> repeat"
LESSON = (
    "The loop is a cycle the graph has to earn: after every verify, code asks a ProgressGuard "
    "whether another round is worth it. An impossible task stops on a no-progress window long "
    "before the iteration ceiling; a round cap is a second, independent brake for a task that "
    "keeps improving but can never finish."
)
DEFAULT_BUDGET = Budget(max_iterations=100, max_tokens=200_000)
DEFAULT_ROUNDS = 20
WINDOW = 3
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83,
          89, 97, 101, 103, 107, 109, 113)


def _prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


CHECKS: dict[str, Callable[[int], bool]] = {
    "even": lambda n: n % 2 == 0,
    "odd": lambda n: n % 2 == 1,
    "divisible by 3": lambda n: n % 3 == 0,
    "divisible by 5": lambda n: n % 5 == 0,
    "greater than 20": lambda n: n > 20,
    "prime": _prime,
}


@dataclass(frozen=True)
class Problem:
    """A task: its prompt, the checks a candidate must pass, how progress is measured, a script.

    ``finite`` is False for a task no answer can finish (the largest prime): its target is
    never met and its measure is the largest passing candidate, which can grow forever.
    """

    prompt: str
    checks: tuple[str, ...]
    finite: bool
    script: tuple[str, ...]


PROBLEMS: dict[Task, Problem] = {
    Task.IMPOSSIBLE: Problem("Find a whole number that is both even and odd.", ("even", "odd"),
                             True, ("4", "Then 7.", "How about 10?", "13")),
    Task.SOLVABLE: Problem("Find a whole number divisible by 3 and by 5 and greater than 20.",
                           ("divisible by 3", "divisible by 5", "greater than 20"), True,
                           ("9", "25", "45")),
    Task.UNBOUNDED: Problem("Find the largest prime number.", ("prime",), False,
                            tuple(str(p) for p in PRIMES)),
}


class Attempt(BaseModel):
    """One round's candidate and what the checks made of it."""

    round: int
    reply: str
    candidate: int | None
    passed: list[str]
    failed: list[str]


class Stage1State(GraphARCState):
    """The loop's state: the task, the round, the latest prompt and reply, every attempt."""

    task: Task
    round: int = 0
    prompt: str = ""
    reply: str = ""
    attempts: list[Attempt] = Field(default_factory=list)
    stop_reason: StopReason | None = None


def measure(problem: Problem, attempts: list[Attempt]) -> int:
    """Progress so far: checks the latest candidate passed, or the largest passing one."""
    if not attempts:
        return 0
    if problem.finite:
        return len(attempts[-1].passed)
    return max((a.candidate for a in attempts if a.candidate is not None and not a.failed), default=0)


def solved(problem: Problem, attempts: list[Attempt]) -> bool:
    """The target: a finite task's latest candidate passed every check."""
    if not problem.finite or not attempts:
        return False
    return attempts[-1].candidate is not None and not attempts[-1].failed


def build_prompt(problem: Problem, attempts: list[Attempt]) -> str:
    """What ``discover`` hands the model: the task, the checks and every earlier result."""
    lines = [f"Task: {problem.prompt}", f"A candidate passes when it is: {', '.join(problem.checks)}."]
    if attempts:
        lines.append("Earlier attempts:")
        lines += [f"  round {a.round}: {a.candidate} passed: {', '.join(a.passed) or 'none'}; "
                  f"failed: {', '.join(a.failed) or 'none'}" for a in attempts]
    lines.append("Reply with one whole number and nothing else.")
    return "\n".join(lines)


def build_stage1(model: Any, task: Task, *, trace: Path | None, budget: Budget = DEFAULT_BUDGET,
                 max_rounds: int = DEFAULT_ROUNDS, window: int = WINDOW,
                 checkpointer: Any = None) -> Any:
    """The compiled loop; the guard's brakes are ``window`` rounds of no progress and ``max_rounds``.

    The guard lives in this graph and is reset when a run starts, so the graph serves one run
    at a time.
    """
    problem = PROBLEMS[task]
    guard = ProgressGuard(max_rounds=max_rounds, window=window,
                          target=lambda s: solved(problem, s.attempts),
                          measure=lambda s: measure(problem, s.attempts))

    def discover(state: Stage1State) -> dict[str, Any]:
        if state.round == 0:
            guard.reset()
        return {"round": state.round + 1, "prompt": build_prompt(problem, state.attempts)}

    def act(state: Stage1State) -> dict[str, Any]:
        return {"reply": ask(model, state.prompt)}

    def verify(state: Stage1State) -> dict[str, Any]:
        candidate = first_integer(state.reply)
        results = {name: candidate is not None and CHECKS[name](candidate) for name in problem.checks}
        attempt = Attempt(round=state.round, reply=state.reply, candidate=candidate,
                          passed=[name for name, ok in results.items() if ok],
                          failed=[name for name, ok in results.items() if not ok])
        attempts = [*state.attempts, attempt]
        stop = guard.check(state.model_copy(update={"attempts": attempts}))
        return {"attempts": attempts, "stop_reason": stop}

    def next_step(state: Stage1State) -> Literal["repeat", "stop"]:
        return "stop" if state.stop_reason is not None else "repeat"

    graph = GraphARC(Stage1State, name="stage1", budget=budget, trace=trace)
    graph.add_node("discover", discover, writes={"round", "prompt"})
    graph.add_node("act", act, writes={"reply"})
    graph.add_node("verify", verify, writes={"attempts", "stop_reason"})
    graph.add_edge(START, "discover")
    graph.add_edge("discover", "act")
    graph.add_edge("act", "verify")
    graph.add_conditional_edge("verify", next_step, {"repeat": "discover", "stop": END})
    return graph.compile(checkpointer=checkpointer)


def run_stage1(*, trace: Path, task: Task = Task.IMPOSSIBLE, model_spec: str | None = None,
               budget: Budget = DEFAULT_BUDGET, max_rounds: int = DEFAULT_ROUNDS,
               window: int = WINDOW) -> StageOutcome:
    """Run the loop on ``task`` (scripted unless ``model_spec``) and report how it stopped."""
    from langgraph.checkpoint.memory import InMemorySaver

    problem = PROBLEMS[task]
    model = demo_model(model_spec, problem.script, name=f"stage1-{task}")
    thread_id = new_thread_id("stage1")
    config = thread_config(thread_id)
    graph = build_stage1(model, task, trace=trace, budget=budget, max_rounds=max_rounds,
                         window=window, checkpointer=InMemorySaver())
    values, _ = run_to_end(graph, {"task": task}, config)  # a ceiling: see the run
    state = Stage1State.model_validate(values)
    return _outcome(problem, state, run_record(trace, graph.last_run), budget, max_rounds, window,
                    model_spec)


def describe_stop(reason: StopReason | None, window: int, max_rounds: int, run: RunRecord) -> str:
    """A stop reason in words."""
    if reason is StopReason.NO_PROGRESS:
        return f"no_progress: {window} rounds in a row did not beat the best result"
    if reason is StopReason.ROUND_CAP:
        return f"round_cap: reached the cap of {max_rounds} rounds while still improving"
    if reason is StopReason.TARGET_MET:
        return "target_met: the latest candidate passed every check"
    return f"not stopped by a guard: the run ended {run.status} ({run.stop_reason})"


def _round_line(attempt: Attempt, progressed: bool) -> str:
    verdict = f"passed {', '.join(attempt.passed) or 'nothing'}"
    if attempt.failed:
        verdict += f"; failed {', '.join(attempt.failed)}"
    return f"{attempt.round}: {attempt.candidate if attempt.candidate is not None else '(none)'} " \
           f"-> {verdict}" + ("  (progress)" if progressed else "")


def _outcome(problem: Problem, state: Stage1State, run: RunRecord, budget: Budget, max_rounds: int,
             window: int, model_spec: str | None) -> StageOutcome:
    ceiling = budget.max_iterations
    progress, best = [], None
    for index in range(len(state.attempts)):
        value = measure(problem, state.attempts[: index + 1])
        progress.append(best is None or value > best)
        best = value if best is None else max(best, value)
    stopped = describe_stop(state.stop_reason, window, max_rounds, run)
    of_ceiling = f" of {ceiling}" if ceiling else ""
    facts = [("task", f"{problem.prompt}  [{state.task}]"), ("stopped", stopped),
             ("brakes", f"no-progress window {window} rounds | round cap {max_rounds} | "
                        f"ceiling {ceiling or 'none'} iterations"),
             ("used", f"{state.round} rounds, {run.iterations}{of_ceiling} iterations, "
                      f"{run.tokens} tokens")]
    facts += [("rounds" if index == 0 else "", _round_line(attempt, progress[index]))
              for index, attempt in enumerate(state.attempts)]
    halted = state.stop_reason is not None and run.status == "completed"
    checks = (Check("the loop halted on a guard's recorded stop reason", state.stop_reason is not None),
              Check(f"it halted under the iteration ceiling ({run.iterations}{of_ceiling})",
                    run.status == "completed"))
    summary = (f"the {state.task} task halted on {state.stop_reason} after {state.round} rounds "
               f"({run.iterations}{of_ceiling} iterations)" if halted else
               f"the loop ran out of road: the {run.stop_reason} budget ended it after {state.round} rounds")
    return StageOutcome(
        stage="stage1", title=TITLE, lesson=LESSON, status="halted" if halted else "exhausted",
        summary=summary, run=run, checks=checks, facts=tuple(facts),
        stop_reason=state.stop_reason.value if state.stop_reason else run.stop_reason,
        model=model_spec or SCRIPTED_LABEL,
        state={"task": state.task.value, "rounds": state.round,
               "stop_reason": state.stop_reason.value if state.stop_reason else None,
               "attempts": [a.model_dump(mode="json") for a in state.attempts]},
        details={"brakes": {"window": window, "max_rounds": max_rounds,
                            "max_iterations": ceiling}})
