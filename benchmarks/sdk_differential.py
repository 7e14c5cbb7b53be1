"""Every ``langgraph-sdk`` method against ``langgraph dev`` and ``grapharc serve``: where they differ.

Both servers serve the same graphs (tests/grapharc-server/client_graphs.py: the credit demo, a chat
on the scripted model, a waiter; ``langgraph dev`` serves their plain twins, see langgraph_dev.py).
The same client makes the same calls with the same arguments, in the same order, against each
(sdk_calls.py: threads.*, runs.*, assistants.*, crons.* and store.*), and each answer is reduced to an
``Observation``: its outcome (``ok``, ``HTTP 422``, an exception's type), the key paths of what it
returned (two levels deep) and, for a stream, its events in order. Ids and values are not compared:
they differ by design. A call is ``same``, ``differs`` (with what differs), or gets no verdict
when it failed on ``langgraph dev`` itself (a failure there says nothing about grapharc).

It lives in benchmarks/, beside server_load.py, rather than in the test suite: it needs a second
virtualenv with ``langgraph-cli[inmem]`` from the package registry (langgraph_dev.py makes it), and
it reports differences rather than asserting them away. It prints no verdict at all (exit
status 1, the failure on stderr) when either server answered none of the calls: a server that
never came up would otherwise read as "no verdict" or "differs" on every line. The tests check
its comparison on canned observations and run its calls against a real grapharc serve
(tests/grapharc-server/test_sdk_differential.py).

    .venv/bin/python benchmarks/sdk_differential.py [--json]
    .venv/bin/python benchmarks/sdk_differential.py --theirs URL --ours URL   # servers already up
    .venv/bin/python benchmarks/sdk_differential.py --canned FILE             # no servers at all
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sdk_calls, langgraph_dev: modules beside this one

from _arguments import ReadableFile, ServerURL, benchmark_parser
from _checked import WorkFailed, checked_main
from sdk_calls import CALLS, MEANT_TO_FAIL, Streamed

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ROOT / "tests" / "grapharc-server"
REGISTRY = "client_graphs:register"
CALL_SECONDS = 30.0
"""Bound on one call (a stream that never ends is recorded as timed out, not waited for)."""
DEPTH = 2
"""How many levels of an answer's keys are compared."""


# -- observing and comparing ----------------------------------------------------------------------

@dataclass(frozen=True)
class Observation:
    """One call's answer reduced to what the comparison reads (``detail`` is shown, not compared)."""

    outcome: str
    keys: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.outcome != "ok"


@dataclass(frozen=True)
class Verdict:
    """How grapharc's answer to one call compares with langgraph dev's."""

    call: str
    verdict: str  # same | differs | no verdict
    differences: tuple[str, ...]
    theirs: Observation
    ours: Observation


def key_paths(value: Any, depth: int = DEPTH, prefix: str = "") -> set[str]:
    """The dotted key paths of ``value`` down to ``depth`` levels; a list's items share ``[]``."""
    if depth == 0:
        return set()
    if isinstance(value, dict):
        paths = set()
        for key, inner in value.items():
            path = f"{prefix}{key}"
            paths |= {path} | key_paths(inner, depth - 1, f"{path}.")
        return paths
    if isinstance(value, list | tuple):
        return set().union(*(key_paths(item, depth, f"{prefix}[].") for item in value))
    return set()


def observe(value: Any) -> Observation:
    """The observation of a call that returned ``value`` (a ``Streamed`` for a stream)."""
    if isinstance(value, Streamed):
        keys = set().union(*(key_paths(part.data, 1, f"{part.event}:") for part in value.parts))
        return Observation("ok", tuple(sorted(keys)), tuple(part.event for part in value.parts))
    return Observation("ok", tuple(sorted(key_paths(value))), (), type(value).__name__)


def observe_failure(error: BaseException) -> Observation:
    """The observation of a call that raised ``error``."""
    if isinstance(error, httpx.HTTPStatusError):
        return Observation(f"HTTP {error.response.status_code}", detail=error.response.text[:300])
    if isinstance(error, TimeoutError):
        return Observation("timed out", detail=f"no answer within {CALL_SECONDS:g} s")
    return Observation(f"raised {type(error).__name__}", detail=str(error)[:300])


def squeeze(events: tuple[str, ...]) -> str:
    """Events as a short line: runs of one event written once with a count."""
    return ", ".join(f"{name}x{len(run)}" if len(run := list(group)) > 1 else name
                     for name, group in itertools.groupby(events))


def compare(call: str, theirs: Observation, ours: Observation, meant_to_fail: bool = False) -> Verdict:
    """The verdict on one call: no verdict where langgraph dev failed (unless the call is
    ``meant_to_fail``: then how it failed is compared), else what differs."""
    if theirs.failed and not meant_to_fail:
        return Verdict(call, "no verdict", (f"failed on langgraph dev: {theirs.outcome}",), theirs, ours)
    differences = []
    if ours.outcome != theirs.outcome:
        differences.append(f"outcome: {theirs.outcome} on langgraph dev, {ours.outcome} here")
    else:
        missing = sorted(set(theirs.keys) - set(ours.keys))
        extra = sorted(set(ours.keys) - set(theirs.keys))
        if missing:
            differences.append(f"keys missing here: {', '.join(missing)}")
        if extra:
            differences.append(f"keys only here: {', '.join(extra)}")
        if ours.events != theirs.events:
            differences.append(f"events: [{squeeze(theirs.events)}] on langgraph dev, "
                               f"[{squeeze(ours.events)}] here")
    return Verdict(call, "differs" if differences else "same", tuple(differences), theirs, ours)


async def observe_all(url: str, scratch: Path) -> dict[str, Observation]:
    """Every call of ``CALLS`` against the server at ``url``, in order, each observed; ``scratch``
    is a folder of this server's own (the waiter's release file)."""
    from langgraph_sdk import get_client

    ctx: dict[str, Any] = {"release": str(scratch / "release")}
    observed = {}
    client = get_client(url=url, timeout=CALL_SECONDS)
    for step in CALLS:
        missing = [need for need in step.needs if need not in ctx]
        if missing:
            observed[step.name] = Observation(f"skipped: needs {', '.join(missing)}")
            continue
        try:
            observed[step.name] = observe(await asyncio.wait_for(step.body(client, ctx), CALL_SECONDS))
        except Exception as error:  # every failure is what this script reports
            observed[step.name] = observe_failure(error)
    Path(ctx["release"]).touch()  # let a waiter still running end
    return observed


# -- serving, reporting ---------------------------------------------------------------------------

@contextlib.contextmanager
def grapharc_serve(work: Path) -> Iterator[str]:
    """``grapharc serve`` on 127.0.0.1 with ``REGISTRY``'s graphs, sessions in ``work``; its URL."""
    env = {**os.environ, "PYTHONPATH": str(GRAPHS)}
    command = [sys.executable, "-m", "grapharc.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--json",
               "--sessions", str(work / "sessions"), "--registry", REGISTRY]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        yield announced_url(server)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def announced_url(server: subprocess.Popen[str]) -> str:
    """The URL in the JSON document a launched ``grapharc serve --json`` prints once it listens."""
    assert server.stdout is not None
    text = ""
    while line := server.stdout.readline():
        text += line
        with contextlib.suppress(json.JSONDecodeError):
            return str(json.loads(text)["url"])
    raise RuntimeError("grapharc serve exited before announcing its address")


def verdicts(theirs: dict[str, Observation], ours: dict[str, Observation]) -> list[Verdict]:
    """The verdict on every call either side observed, in the order of ``theirs``."""
    missing = Observation("not called")
    return [compare(name, theirs.get(name, missing), ours.get(name, missing), name in MEANT_TO_FAIL)
            for name in dict.fromkeys([*theirs, *ours])]


def table(found: list[Verdict]) -> str:
    """The verdicts as a plain-text table, then a count of each verdict."""
    width = max(len(v.call) for v in found)
    lines = [f"{'call':<{width}}  {'langgraph dev':<14}  {'grapharc':<14}  verdict"]
    for v in found:
        lines.append(f"{v.call:<{width}}  {v.theirs.outcome[:14]:<14}  {v.ours.outcome[:14]:<14}  "
                     f"{v.verdict}")
        if v.verdict == "differs":
            lines.extend(f"{'':<{width}}    - {difference}" for difference in v.differences)
    counts = {kind: sum(v.verdict == kind for v in found) for kind in ("same", "differs", "no verdict")}
    lines.append(", ".join(f"{count} {kind}" for kind, count in counts.items()) + f" of {len(found)} calls")
    return "\n".join(lines)


def as_json(found: list[Verdict]) -> str:
    return json.dumps([asdict(v) for v in found], indent=2)


def observed_from(data: dict[str, Any]) -> dict[str, Observation]:
    """Observations read back from JSON (``{call: {"outcome": ..., "keys": [...], ...}}``)."""
    return {name: Observation(fields["outcome"], tuple(fields.get("keys", ())),
                              tuple(fields.get("events", ())), fields.get("detail", ""))
            for name, fields in data.items()}


def check_answered(found: list[Verdict]) -> None:
    """``WorkFailed`` unless each server answered at least one call: with none, its side of every
    verdict is a failure to reach it, not an answer to compare."""
    for side, name in (("theirs", "langgraph dev"), ("ours", "grapharc serve")):
        answered = [v for v in found if not getattr(v, side).failed]
        if not answered:
            first = getattr(found[0], side) if found else Observation("no call made")
            raise WorkFailed(f"{name} answered none of the {len(found)} calls "
                             f"(the first: {first.outcome} {first.detail}".rstrip() + ")")


def canned_observations(path: Path) -> tuple[dict[str, Observation], dict[str, Observation]]:
    """Both sides' observations from a ``--canned`` file; ``ValueError`` saying what is wrong with it."""
    try:
        canned = json.loads(path.read_text())
        return observed_from(canned["theirs"]), observed_from(canned["ours"])
    except OSError as exc:
        raise ValueError(f"--canned {path}: cannot be read: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"--canned {path}: not JSON: {exc}") from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"--canned {path}: not {{\"theirs\": {{call: {{\"outcome\": ...}}}}, "
                         f"\"ours\": {{...}}}} ({type(exc).__name__}: {exc})") from None


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the verdicts as one JSON document")
    parser.add_argument("--theirs", type=ServerURL(),
                        help="a LangGraph server already up (default: start langgraph dev)")
    parser.add_argument("--ours", type=ServerURL(), help="a grapharc serve already up (default: start one)")
    parser.add_argument("--canned", type=ReadableFile(),
                        help='compare the observations in a JSON file {"theirs": {...}, "ours": {...}}')
    args = parser.parse_args()
    if args.canned is not None:
        try:
            found = verdicts(*canned_observations(args.canned))
        except ValueError as exc:
            parser.error(str(exc))
    else:
        found = asyncio.run(_observe_both(args.theirs, args.ours))
    check_answered(found)
    print(as_json(found) if args.json else table(found))
    return 0


async def _observe_both(theirs_url: str | None, ours_url: str | None) -> list[Verdict]:
    """Observe every call on langgraph dev, then on grapharc serve (each started unless given)."""
    from langgraph_dev import langgraph_dev

    with tempfile.TemporaryDirectory(prefix="grapharc-differential-") as tmp, contextlib.ExitStack() as stack:
        work = Path(tmp)
        for side in ("theirs", "ours"):
            (work / side).mkdir()
        if theirs_url is None:
            began = time.monotonic()
            theirs_url = stack.enter_context(langgraph_dev(work / "theirs", REGISTRY, [GRAPHS])).url
            print(f"langgraph dev answered after {time.monotonic() - began:.1f} s", file=sys.stderr)
        theirs = await observe_all(theirs_url, work / "theirs")
        if ours_url is None:
            ours_url = stack.enter_context(grapharc_serve(work / "ours"))
        ours = await observe_all(ours_url, work / "ours")
        return verdicts(theirs, ours)


if __name__ == "__main__":
    checked_main(main)
