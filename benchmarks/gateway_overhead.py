"""Gateway overhead: a gateway model's ``invoke`` against a bare ``ChatOpenAI`` on the same local server.

Both talk to the tests' OpenAI-compatible server on 127.0.0.1 (one process, one
connection pool), so the difference is what the gateway adds per call: the retry
wrapper, the usage envelope with its price, and a SpendMeter checked and charged.
Calls alternate one by one so drift hits both alike; the report is the median
seconds per call of each, and the medians of the paired ratios (gateway / bare)
and paired differences (the overhead in microseconds), which are what a busy
machine disturbs least. Every call must come back with the server's answer, the server must
have received every call, and the SpendMeter must have been charged for every gateway call;
otherwise the script exits 1 and prints no figure.

    .venv/bin/python benchmarks/gateway_overhead.py [--calls N] [--quick] [--json]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "grapharc-gateway"))

from _arguments import Count, benchmark_parser
from _checked import checked_main, expect_equal
from gateway_fakes import FakeOpenAI

WARM_CALLS = 30
ANSWER = "echo: hello"
"""What the server answers every call."""


def call_seconds(model: Any) -> float:
    """Seconds one call took, once its answer is checked."""
    started = time.perf_counter()
    reply = model.invoke("hello")
    seconds = time.perf_counter() - started
    expect_equal(reply.content, ANSWER, "a model's answer")
    return seconds


def measure(calls: int) -> dict[str, Any]:
    """Per-call seconds for the bare and the gateway model, alternating call by call."""
    from langchain_openai import ChatOpenAI

    from grapharc.gateway import SpendMeter, get_model

    meter = SpendMeter(1e9)
    with FakeOpenAI() as server:
        bare = ChatOpenAI(model="gpt-4o-mini", base_url=server.base_url, api_key="k", max_retries=0)
        gateway = get_model("openai/gpt-4o-mini", base_url=server.base_url, api_key="k",
                            price_per_million=(0.15, 0.6), spend_meter=meter)
        for _ in range(WARM_CALLS):  # warm the connection pool and the imports
            call_seconds(bare)
            call_seconds(gateway)
        pairs = [(call_seconds(bare), call_seconds(gateway)) for _ in range(calls)]
        received = len(server.completions)
    expect_equal(received, 2 * (WARM_CALLS + calls), "calls the server received")
    expect_equal((meter.calls, meter.spent_usd > 0), (WARM_CALLS + calls, True),
                 "gateway calls the SpendMeter charged, and whether it charged a price")
    return {"bare": statistics.median(b for b, _ in pairs),
            "gateway": statistics.median(g for _, g in pairs),
            "ratio": statistics.median(g / b for b, g in pairs),
            "overhead": statistics.median(g - b for b, g in pairs)}


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Count(1, 1_000_000), default=1000)
    parser.add_argument("--quick", action="store_true", help="20 calls each")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.calls = 20
    medians = measure(args.calls)
    report = {
        "bare_ms_per_call": round(medians["bare"] * 1000, 3),
        "gateway_ms_per_call": round(medians["gateway"] * 1000, 3),
        "ratio_gateway_to_bare": round(medians["ratio"], 3),
        "overhead_us_per_call": round(medians["overhead"] * 1e6, 1),
        "calls_each": args.calls,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"bare ChatOpenAI   {report['bare_ms_per_call']:>8.3f} ms/call (median)")
    print(f"gateway openai/   {report['gateway_ms_per_call']:>8.3f} ms/call (median)")
    print(f"paired ratio      {report['ratio_gateway_to_bare']:>8.3f}x   "
          f"(paired overhead {report['overhead_us_per_call']:+.0f} us per call, "
          f"{report['calls_each']} calls each)")
    return 0


if __name__ == "__main__":
    checked_main(main)
