"""What a run's live log costs per token: ``LiveLog.put`` (LangGraph's chunk turned into the SSE
events of the run's modes, written as JSON, secrets redacted) and its batched writes to the run store.

For each mode set, ``--tokens`` message chunks (replies of ``--reply`` tokens each, as a chat model
streams them, the event loop turning every 20) go through a fresh log over a SQLite run store in a
temporary directory, or the PostgreSQL database ``--postgres`` names (GraphARC's tables are made in
it: give it a database of its own); reported: µs per token for the
puts alone, for puts and writes until the log is closed, and µs per event to read the log back (what
a stream does). ``messages`` sends the message so far with each token, so its cost grows with the
reply's length, as LangGraph's own ``messages/partial`` does. Each mode set's log must hold at
least one event per token and mode, and read back every event it holds; otherwise the script
exits 1 and prints no figure.

    .venv/bin/python benchmarks/live_log.py [--tokens N] [--reply N] [--postgres URI] [--quick] [--json]
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _arguments import Count, StoreURI, benchmark_parser
from _checked import checked_main, expect, expect_equal
from langchain_core.messages import AIMessageChunk

from grapharc.runs.contracts import RunStore
from grapharc.runs.records import RunRecord
from grapharc.server.api.live import LiveLog
from grapharc.server.api.progress import Progress
from grapharc.stores import open_store

MODE_SETS = (["messages-tuple"], ["messages"], ["messages-tuple", "messages"])
METADATA = {"langgraph_step": 1, "langgraph_node": "chat", "langgraph_triggers": ["branch:to:chat"],
            "langgraph_path": ["__pregel_pull", "chat"], "langgraph_checkpoint_ns": "chat:1f2e",
            "thread_id": "t1", "ls_provider": "scripted", "ls_model_name": "api-chat",
            "ls_model_type": "chat"}


async def measure(store: RunStore, modes: list[str], tokens: int, reply: int) -> dict[str, Any]:
    """One mode set's figures: µs per token put, put and written, and µs per event read back."""
    run = RunRecord(run_id=uuid.uuid4().hex, thread_id="bench", assistant_id="chat",
                    request={"kind": "start"}, created_at=0.0, updated_at=0.0, stream_modes=tuple(modes))
    log = LiveLog(store, run, Progress(), time.time, 0)
    chunks = [AIMessageChunk(content=f"word{i} ", id=f"lc_run--{i // reply}")
              for i in range(tokens)]
    started = time.perf_counter()
    for i, chunk in enumerate(chunks):
        log.put((), "messages", (chunk, METADATA))
        if i % 20 == 19:
            await asyncio.sleep(0)
    put = time.perf_counter() - started
    await log.close()
    written = time.perf_counter() - started
    events = store.last_live(run.run_id)
    expect(events >= tokens * len(modes), f"{'+'.join(modes)}: the log holds {events} events for {tokens} "
           f"tokens in {len(modes)} mode(s)")
    started = time.perf_counter()
    back = store.live_after(run.run_id, 0)
    read = time.perf_counter() - started
    expect_equal(len(back), events, f"{'+'.join(modes)}: events read back")
    return {"modes": "+".join(modes), "events": events, "put_us_per_token": round(put / tokens * 1e6, 1),
            "put_and_write_us_per_token": round(written / tokens * 1e6, 1),
            "read_us_per_event": round(read / events * 1e6, 1)}


def line(row: dict[str, Any]) -> str:
    """One mode set's figures as a line of the table."""
    return (f"{row['modes']:<24} {row['events']:>6} events  put {row['put_us_per_token']:7.1f} µs/token  "
            f"put+write {row['put_and_write_us_per_token']:7.1f} µs/token  "
            f"read {row['read_us_per_event']:6.1f} µs/event")


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=Count(1, 10_000_000), default=5000)
    parser.add_argument("--reply", type=Count(1, 1_000_000), default=200, help="tokens per reply")
    parser.add_argument("--postgres", type=StoreURI("runs"),
                        help="a PostgreSQL URI (default: SQLite in a temporary directory)")
    parser.add_argument("--quick", action="store_true", help="400 tokens")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    if args.quick:
        args.tokens = 400
    location = args.postgres or f"sqlite:{tempfile.mkdtemp()}"
    store = open_store(location, kind="runs")
    try:
        rows = [asyncio.run(measure(store, modes, args.tokens, args.reply)) for modes in MODE_SETS]
        where = "PostgreSQL" if args.postgres else "SQLite"
        if args.json:
            document = {"tokens": args.tokens, "reply": args.reply, "store": where, "rows": rows}
            print(json.dumps(document, indent=2))
        else:
            print(f"{args.tokens} tokens in replies of {args.reply}, over {where}")
            print("\n".join(line(row) for row in rows))
        return 0
    finally:
        store.close()
        if not args.postgres:
            for leftover in Path(location.removeprefix("sqlite:")).glob("*"):
                leftover.unlink()


if __name__ == "__main__":
    checked_main(main)
