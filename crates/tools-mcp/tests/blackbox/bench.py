#!/usr/bin/env python3
"""Per-call overhead of the tools-mcp gateway over stdio.

Sequential `get_current_time {"timezone": "UTC"}` calls (a) straight to mcp-server-time and
(b) through the gateway (only the time server, mode native), each over stdio with a
`ClientSession`. Both sessions stay open; 20 warm-up calls each, then 3 interleaved rounds
of BENCH_CALLS (default 300) calls per target. Prints the median per-call latency of each
and the ratio gateway/direct; the last line is JSON.
"""
from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import BIN, TIME_SERVER  # noqa: E402  (the same defaults as run.py)

CALLS = int(os.environ.get("BENCH_CALLS", "300"))
WARMUP = 20
ROUNDS = 3


async def open_session(stack: contextlib.AsyncExitStack, params: StdioServerParameters, errlog) -> ClientSession:
    r, w = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    s = await stack.enter_async_context(ClientSession(r, w, read_timeout_seconds=60))
    await s.initialize()
    return s


async def timed_calls(s: ClientSession, tool: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = await s.call_tool(tool, {"timezone": "UTC"})
        out.append(time.perf_counter() - t0)
        if r.is_error or (r.structured_content or {}).get("timezone") != "UTC":
            raise RuntimeError(f"{tool} failed: {r}")
    return out


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tools-mcp-bench-") as d:
        cfg = Path(d) / "bench.toml"
        cfg.write_text(f'mode = "native"\n[servers.time]\ncommand = {json.dumps([TIME_SERVER])}\n')
        errlog = open(Path(d) / "stderr.log", "w")
        async with contextlib.AsyncExitStack() as stack:
            targets = {
                "direct": (await open_session(stack, StdioServerParameters(command=TIME_SERVER), errlog),
                           "get_current_time"),
                "gateway": (await open_session(
                    stack, StdioServerParameters(command=BIN, args=["gateway", "--config", str(cfg)]), errlog),
                    "time__get_current_time"),
            }
            for s, tool in targets.values():
                await timed_calls(s, tool, WARMUP)
            samples: dict[str, list[float]] = {k: [] for k in targets}
            rounds = []
            for i in range(ROUNDS):
                order = list(targets) if i % 2 == 0 else list(reversed(targets))
                this = {}
                for name in order:
                    s, tool = targets[name]
                    lat = await timed_calls(s, tool, CALLS)
                    samples[name] += lat
                    this[name] = statistics.median(lat) * 1000
                rounds.append({k: round(v, 3) for k, v in this.items()})
                print(f"round {i + 1}: direct {this['direct']:.3f} ms, gateway {this['gateway']:.3f} ms", flush=True)
        errlog.close()
    direct = statistics.median(samples["direct"]) * 1000
    gateway = statistics.median(samples["gateway"]) * 1000
    print(f"median per call: direct {direct:.3f} ms, gateway {gateway:.3f} ms, ratio {gateway / direct:.2f}")
    print(json.dumps({
        "calls_per_round": CALLS, "rounds": ROUNDS, "warmup": WARMUP,
        "direct_median_ms": round(direct, 3), "gateway_median_ms": round(gateway, 3),
        "ratio": round(gateway / direct, 3), "per_round_median_ms": rounds,
        "binary": BIN,
    }))


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)
