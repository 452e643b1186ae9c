#!/usr/bin/env python3
"""The gateway over streamable HTTP against the same server reached directly and through
mcp-proxy (npm), side by side in one run.

The served server is `@modelcontextprotocol/server-everything`, its `echo` tool. Targets:

- `direct`: the server's own streamable HTTP mode (`node index.js streamableHttp`), no hop.
- `gateway`: `tools-mcp gateway --http` with `[auth]` (a static bearer token), `[audit]`
  (a JSON line per call into a file) and `[limits]` (`"*"`, evaluated on every call, set so
  high that they never refuse), the server as its stdio upstream.
- `gateway_plain`: the same gateway without `[auth]`, `[audit]` and `[limits]` (shows what
  those three cost; no target is set on it).
- `proxy`: `mcp-proxy --server stream --apiKey KEY -- node index.js stdio`, its own
  credential check (`X-API-Key`) on.
- `stdio`: the server over its stdio (`node index.js stdio`), the floor of any hop in front
  of it: one session on one pipe, the N clients' calls in flight on it at once (JSON-RPC
  ids). No HTTP on either side, so "added over stdio" includes the HTTP hop itself.

The HTTP targets are all stateful (sessions: the direct server has no stateless mode). Every
HTTP client is one session on one keep-alive HTTP/1.1 connection driven by a small stdlib
asyncio client (raw JSON-RPC POSTs, `Accept: application/json, text/event-stream`), the same
for every target; each response is checked to carry the echoed text. The p50 target is
judged against `direct`; the figures over `stdio` are printed beside it. 64 sessions per target are opened before
the rounds; each phase reopens its clients' connections (untimed), runs a few untimed
calls, then calls back to back for BENCH_HTTP_SECONDS. A round runs every target at 1, 16
and 64 clients, the order of targets rotated each round. Latency (p50, p99) is that of the
1-client phases, all rounds pooled; throughput is calls completed / wall time, the median of
the rounds. CPU time per call of the client and of each target's processes (from
/proc/PID/stat) says where the time goes. The last line printed is JSON.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import BIN, EVERYTHING_JS, MCP_PROXY_JS, NODE, free_port  # noqa: E402

SECONDS = float(os.environ.get("BENCH_HTTP_SECONDS", "2"))
ROUNDS = int(os.environ.get("BENCH_HTTP_ROUNDS", "3"))
CLIENTS = (1, 16, 64)
WARMUP_CALLS = 5  # per client and phase, untimed
START_TIMEOUT = 30.0
CALL_TIMEOUT = 30.0  # a failure guard only
PROTOCOL = "2025-06-18"
MESSAGE = "hello from bench_http"
EXPECTED = json.dumps(f"Echo: {MESSAGE}").encode()
CLK_TCK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- the client


class Client:
    """One MCP session over one keep-alive HTTP/1.1 connection (reopened by `reconnect`)."""

    def __init__(self, port: int, headers: dict[str, str], tool: str):
        self.port = port
        self.base = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.tool = tool
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.next_id = 1
        self.head = b""

    async def reconnect(self) -> None:
        await self.close()
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
            self.writer = None

    def _request(self, body: bytes, extra: str = "") -> bytes:
        return (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{self.base}{extra}"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body

    async def _exchange(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")  # no trailers are sent
                    break
                parts.append((await self.reader.readexactly(size + 2))[:-2])
            body = b"".join(parts)
        else:
            body = await self.reader.read()
        if headers.get("connection", "").lower() == "close":
            await self.reconnect()
        return status, headers, body

    async def open_session(self) -> None:
        await self.reconnect()
        init = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                       "clientInfo": {"name": "bench_http", "version": "1"}},
        }
        status, headers, body = await self._exchange(self._request(json.dumps(init).encode()))
        sid = headers.get("mcp-session-id")
        if status != 200 or not sid or b'"protocolVersion"' not in body:
            raise RuntimeError(f"initialize on port {self.port}: {status} {headers} {body[:300]!r}")
        self.head = f"Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n"
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        status, _, body = await self._exchange(self._request(note, self.head))
        if status not in (200, 202):
            raise RuntimeError(f"notifications/initialized on port {self.port}: {status} {body[:300]!r}")

    async def call(self) -> None:
        i = self.next_id
        self.next_id += 1
        body = (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
            b'"arguments":{"message":"%s"}}}' % (i, self.tool.encode(), MESSAGE.encode())
        )
        status, _, out = await self._exchange(self._request(body, self.head))
        if status != 200 or EXPECTED not in out or b'"isError":true' in out:
            raise RuntimeError(f"{self.tool} on port {self.port}: {status} {out[:300]!r}")


# ---------------------------------------------------------------- the targets


def cpu_ticks(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2:].split()[1]) == pid:
                out.append(int(d.name))
    return out


def machine_busy_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, all cores."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields[:8]) - idle, sum(fields[:8])


class Target:
    def __init__(self, name: str, argv: list[str], tmp: Path, tool: str, headers: dict[str, str],
                 env: dict[str, str] | None = None, port: int | None = None):
        self.name, self.argv, self.tool, self.headers = name, argv, tool, headers
        self.env, self.port = env, port
        self.stderr_path = tmp / f"{name}.stderr"
        self.proc: subprocess.Popen | None = None
        self.front: list[int] = []
        self.upstream: list[int] = []
        self.clients: list[Client] = []

    async def start(self) -> None:
        err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            env={**os.environ, **(self.env or {})}, start_new_session=True,
        )
        err.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}: {self.stderr_tail()}")
            if self.port is None:  # the gateway prints its address
                for line in self.stderr_path.read_text(errors="replace").splitlines():
                    if line.startswith("tools-mcp: listening on http://"):
                        self.port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
            if self.port is not None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                        break
                except OSError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not listen within {START_TIMEOUT}s: {self.stderr_tail()}")
            await asyncio.sleep(0.05)
        self.front = [self.proc.pid]
        self.upstream = children(self.proc.pid)

    async def open_clients(self, n: int) -> None:
        self.clients = [Client(self.port, self.headers, self.tool) for _ in range(n)]
        for c in self.clients:  # one after another: a burst of 64 initializes is no part of it
            await c.open_session()

    def cpu(self) -> tuple[int, int]:
        return sum(map(cpu_ticks, self.front)), sum(map(cpu_ticks, self.upstream))

    def stderr_tail(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-1500:]
        except OSError:
            return ""

    async def stop(self) -> None:
        for c in self.clients:
            await c.close()
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # our own group (start_new_session): stragglers
        except ProcessLookupError:
            pass


class PipeClient:
    """A caller of the stdio target: its calls share the target's one pipe and session."""

    def __init__(self, target: "StdioTarget"):
        self.target = target

    async def reconnect(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def call(self) -> None:
        out = await self.target.request(
            b'"method":"tools/call","params":{"name":"echo","arguments":{"message":"%s"}}' % MESSAGE.encode()
        )
        if EXPECTED not in out or b'"isError":true' in out:
            raise RuntimeError(f"echo over stdio: {out[:300]!r}")


class StdioTarget(Target):
    """The server on its stdio, driven by the same call loop (JSON lines, no HTTP)."""

    def __init__(self, name: str, argv: list[str], tmp: Path):
        super().__init__(name, argv, tmp, "echo", {})
        self.pending: dict[int, asyncio.Future] = {}
        self.next_id = 1
        self.process: asyncio.subprocess.Process | None = None
        self.reader_task: asyncio.Task | None = None

    async def start(self) -> None:
        err = open(self.stderr_path, "wb")
        self.process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
            start_new_session=True, limit=1 << 20,
        )
        err.close()
        self.front = [self.process.pid]
        self.reader_task = asyncio.create_task(self.read_loop())
        init = json.dumps({"protocolVersion": PROTOCOL, "capabilities": {},
                           "clientInfo": {"name": "bench_http", "version": "1"}}).encode()
        out = await asyncio.wait_for(self.request(b'"method":"initialize","params":' + init), START_TIMEOUT)
        if b'"protocolVersion"' not in out:
            raise RuntimeError(f"initialize over stdio: {out[:300]!r}")
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    async def read_loop(self) -> None:
        while line := await self.process.stdout.readline():
            i = json.loads(line).get("id")
            future = self.pending.pop(i, None) if isinstance(i, int) else None
            if future is not None and not future.done():
                future.set_result(line)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(RuntimeError(f"{self.name} closed its stdout: {self.stderr_tail()}"))

    async def request(self, body: bytes) -> bytes:
        i = self.next_id
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[i] = future
        self.process.stdin.write(b'{"jsonrpc":"2.0","id":%d,%s}\n' % (i, body))
        return await future

    async def open_clients(self, n: int) -> None:
        self.clients = [PipeClient(self) for _ in range(n)]

    async def stop(self) -> None:
        if self.process is None:
            return
        if self.process.returncode is None:
            self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except asyncio.TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self.reader_task is not None:
            self.reader_task.cancel()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # our own group (start_new_session)
        except ProcessLookupError:
            pass


def make_targets(tmp: Path) -> list[Target]:
    token = secrets.token_urlsafe(24)
    digest = hashlib.sha256(token.encode()).hexdigest()
    upstream = f"[servers.everything]\ncommand = {json.dumps([NODE, EVERYTHING_JS, 'stdio'])}\n"
    full = tmp / "gateway.toml"
    full.write_text(
        'mode = "native"\n' + upstream
        + f'[auth]\ntokens = [{{ principal = "bench", sha256 = "{digest}", scopes = [] }}]\n'
        + f"[audit]\npath = {json.dumps(str(tmp / 'audit.jsonl'))}\n"
        + '[limits]\n"*" = { rate = "1000000/s", concurrency = 1024 }\n'
    )
    plain = tmp / "gateway_plain.toml"
    plain.write_text('mode = "native"\n' + upstream)
    api_key = secrets.token_urlsafe(24)
    proxy_port, direct_port = free_port(), free_port()
    accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    gateway = [BIN, "gateway", "--http", "127.0.0.1:0", "--config"]
    return [
        Target("direct", [NODE, EVERYTHING_JS, "streamableHttp"], tmp, "echo", accept,
               env={"PORT": str(direct_port)}, port=direct_port),
        Target("gateway", gateway + [str(full)], tmp, "everything__echo",
               {**accept, "Authorization": f"Bearer {token}"}),
        Target("gateway_plain", gateway + [str(plain)], tmp, "everything__echo", accept),
        Target("proxy", [NODE, MCP_PROXY_JS, "--host", "127.0.0.1", "--port", str(proxy_port),
                         "--server", "stream", "--apiKey", api_key, "--", NODE, EVERYTHING_JS, "stdio"],
               tmp, "echo", {**accept, "X-API-Key": api_key}, port=proxy_port),
        StdioTarget("stdio", [NODE, EVERYTHING_JS, "stdio"], tmp),
    ]


# ---------------------------------------------------------------- measuring


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))]


async def phase(target: Target, n: int) -> dict:
    clients = target.clients[:n]
    for c in clients:
        await c.reconnect()
    for _ in range(WARMUP_CALLS):
        await asyncio.gather(*(c.call() for c in clients))
    latencies: list[float] = []
    clock = time.perf_counter

    async def worker(c: Client, deadline: float) -> None:
        while True:
            t0 = clock()
            if t0 >= deadline:
                return
            await c.call()
            latencies.append(clock() - t0)

    front0, up0 = target.cpu()
    busy0, total0 = machine_busy_ticks()
    client0 = time.process_time()
    start = clock()
    await asyncio.wait_for(asyncio.gather(*(worker(c, start + SECONDS) for c in clients)),
                           SECONDS + CALL_TIMEOUT)
    wall = clock() - start
    client_cpu = time.process_time() - client0
    front1, up1 = target.cpu()
    busy1, total1 = machine_busy_ticks()
    calls = len(latencies)
    latencies.sort()
    ours = client_cpu * CLK_TCK + (front1 - front0) + (up1 - up0)
    per_call = lambda ticks: round(ticks / CLK_TCK / calls * 1e6, 1)  # noqa: E731
    return {
        "calls": calls,
        "calls_per_s": round(calls / wall, 1),
        "p50_us": round(percentile(latencies, 0.50) * 1e6, 1),
        "p99_us": round(percentile(latencies, 0.99) * 1e6, 1),
        "cpu_us_per_call": {
            "client": round(client_cpu / calls * 1e6, 1),
            "front": per_call(front1 - front0),
            "upstream": per_call(up1 - up0),
        },
        # the whole machine's busy share (1.0 = every core busy), ours and anyone else's,
        # and the cores' worth of it that neither the client nor the target used
        "machine_busy": round((busy1 - busy0) / max(1, total1 - total0), 2),
        "others_cores": round(max(0.0, (busy1 - busy0) - ours) / CLK_TCK / wall, 2),
        "_latencies": latencies,
    }


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tools-mcp-bench-http-") as d:
        tmp = Path(d)
        targets = make_targets(tmp)
        try:
            for t in targets:
                await t.start()
                await t.open_clients(max(CLIENTS))
            for t in targets:  # warm-up: JIT, allocators, connection pools
                await phase(t, 16)
            results: dict[str, dict[int, list[dict]]] = {t.name: {n: [] for n in CLIENTS} for t in targets}
            for r in range(ROUNDS):
                for n in CLIENTS:
                    k = (r + CLIENTS.index(n)) % len(targets)
                    for t in targets[k:] + targets[:k]:
                        res = await phase(t, n)
                        results[t.name][n].append(res)
                        cpu = res["cpu_us_per_call"]
                        print(f"round {r + 1} clients {n:2d} {t.name:13s} {res['calls_per_s']:8.1f} calls/s "
                              f"p50 {res['p50_us']:8.1f} us p99 {res['p99_us']:8.1f} us  cpu/call: client "
                              f"{cpu['client']:6.1f} front {cpu['front']:6.1f} upstream {cpu['upstream']:6.1f} us"
                              f"  machine busy {res['machine_busy']:.2f} (others {res['others_cores']:.2f} cores)", flush=True)
            audit_lines = sum(1 for _ in open(tmp / "audit.jsonl"))
        finally:
            for t in targets:
                await t.stop()
    summary = summarize(results)
    summary["audit_lines"] = audit_lines
    print_summary(summary)
    print(json.dumps(summary))


def summarize(results: dict[str, dict[int, list[dict]]]) -> dict:
    out: dict = {"seconds_per_phase": SECONDS, "rounds": ROUNDS, "clients": list(CLIENTS),
                 "binary": BIN, "targets": {}}
    for name, by_n in results.items():
        one = sorted(x for res in by_n[1] for x in res["_latencies"])
        entry = {
            "p50_us": round(percentile(one, 0.50) * 1e6, 1),
            "p99_us": round(percentile(one, 0.99) * 1e6, 1),
            "latency_samples": len(one),
            "calls_per_s": {}, "calls_per_s_rounds": {}, "p50_us_at": {}, "p99_us_at": {},
            "cpu_us_per_call": {}, "machine_busy": {}, "others_cores": {},
        }
        for n, rounds in by_n.items():
            entry["calls_per_s"][n] = round(statistics.median(r["calls_per_s"] for r in rounds), 1)
            entry["calls_per_s_rounds"][n] = [r["calls_per_s"] for r in rounds]
            entry["p50_us_at"][n] = round(statistics.median(r["p50_us"] for r in rounds), 1)
            entry["p99_us_at"][n] = round(statistics.median(r["p99_us"] for r in rounds), 1)
            entry["cpu_us_per_call"][n] = {
                k: round(statistics.median(r["cpu_us_per_call"][k] for r in rounds), 1)
                for k in ("client", "front", "upstream")
            }
            entry["machine_busy"][n] = round(statistics.median(r["machine_busy"] for r in rounds), 2)
            entry["others_cores"][n] = round(statistics.median(r["others_cores"] for r in rounds), 2)
        out["targets"][name] = entry
    t = out["targets"]
    direct, gateway = t["direct"]["p50_us"], t["gateway"]["p50_us"]
    added = gateway - direct
    allowed = max(0.10 * direct, 200.0)
    ratio64 = t["gateway"]["calls_per_s"][64] / t["proxy"]["calls_per_s"][64]
    out["p50_overhead_us"] = round(added, 1)
    out["p50_overhead_pct"] = round(100 * added / direct, 1)
    out["p99_overhead_us"] = round(t["gateway"]["p99_us"] - t["direct"]["p99_us"], 1)
    out["p50_target_us"] = round(allowed, 1)
    out["p50_target_met"] = added <= allowed
    # the stricter view: over the server's own stdio, no HTTP on either side
    floor = t["stdio"]["p50_us"]
    out["p50_over_stdio_us"] = round(gateway - floor, 1)
    out["p50_over_stdio_pct"] = round(100 * (gateway - floor) / floor, 1)
    out["p99_over_stdio_us"] = round(t["gateway"]["p99_us"] - t["stdio"]["p99_us"], 1)
    out["throughput_gateway_over_proxy"] = {
        n: round(t["gateway"]["calls_per_s"][n] / t["proxy"]["calls_per_s"][n], 2) for n in CLIENTS
    }
    out["throughput_gateway_over_proxy_rounds_64"] = [
        round(g / p, 2) for g, p in zip(t["gateway"]["calls_per_s_rounds"][64], t["proxy"]["calls_per_s_rounds"][64])
    ]
    out["throughput_target_met"] = ratio64 >= 2.0
    return out


def print_summary(s: dict) -> None:
    print(f"{'target':13s} {'p50 us':>9s} {'p99 us':>9s} " + " ".join(f"{f'{n} cl calls/s':>14s}" for n in CLIENTS))
    for name, e in s["targets"].items():
        print(f"{name:13s} {e['p50_us']:9.1f} {e['p99_us']:9.1f} "
              + " ".join(f"{e['calls_per_s'][n]:14.1f}" for n in CLIENTS))
    print(f"gateway p50 overhead over direct: {s['p50_overhead_us']:.1f} us ({s['p50_overhead_pct']:.1f} %); "
          f"target <= {s['p50_target_us']:.1f} us: {'met' if s['p50_target_met'] else 'NOT met'}")
    print(f"gateway p50 over the server's stdio (no HTTP anywhere): {s['p50_over_stdio_us']:.1f} us "
          f"({s['p50_over_stdio_pct']:.1f} %); p99: {s['p99_over_stdio_us']:.1f} us")
    ratios = s["throughput_gateway_over_proxy"]
    print("throughput gateway/proxy: " + ", ".join(f"{n} clients {ratios[n]:.2f}x" for n in CLIENTS)
          + f"; target at 64 >= 2x: {'met' if s['throughput_target_met'] else 'NOT met'}")
    print(f"audit lines written by the gateway: {s['audit_lines']}")


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
