#!/usr/bin/env python3
"""The harness of the black-box tests (run.py): paths, configs, reporting, and the gateway
under test started over stdio or streamable HTTP.

Runs with a Python that has `mcp` 2.3.x (stdlib + mcp + anyio only). Every check prints
`ok <name>` or `FAIL <name>: <detail>`; the exit status is 1 if any check failed.
See README.md in this folder for the environment variables.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
# Where `cargo xtask mcp-blackbox` builds and installs (it also sets every variable below).
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
if not TARGET.is_absolute():
    TARGET = ROOT / TARGET
INSTALLED = TARGET / "mcp-blackbox"
MODULES = INSTALLED / "node" / "node_modules" / "@modelcontextprotocol"
BIN = os.environ.get("TOOLS_MCP_BIN", str(TARGET / "debug" / "tools-mcp"))
TIME_SERVER = os.environ.get("MCP_PYTHON_SERVER_TIME", str(INSTALLED / "venv" / "bin" / "mcp-server-time"))
EVERYTHING_JS = os.environ.get("MCP_EVERYTHING_JS", str(MODULES / "server-everything" / "dist" / "index.js"))
INSPECTOR_JS = os.environ.get("MCP_INSPECTOR_JS", str(MODULES / "inspector" / "cli" / "build" / "index.js"))
# The stdio-to-HTTP proxy bench_http.py sets beside the gateway.
MCP_PROXY_JS = os.environ.get(
    "MCP_PROXY_JS", str(INSTALLED / "node" / "node_modules" / "mcp-proxy" / "dist" / "bin" / "mcp-proxy.mjs")
)
# The standard-library MCP server the crate's Rust tests also use.
FAKE_SERVER = ROOT / "crates" / "tools-mcp" / "tests" / "data" / "fake_mcp_server.py"
NODE = os.environ.get("NODE", "node")
PYTHON = sys.executable  # runs wiretap.py and fake_server.py (stdlib only)

# Failure guards only: nothing waits for these to pass when things work.
CHECK_TIMEOUT = 60.0
START_TIMEOUT = 30.0
CANCEL_LOG_TIMEOUT = 10.0

RESULTS: list[tuple[str, bool]] = []


# ---------------------------------------------------------------- reporting helpers


class CheckFailed(Exception):
    pass


def expect(cond: Any, detail: str) -> None:
    if not cond:
        raise CheckFailed(detail)


def record(name: str, error: str | None) -> None:
    if error is None:
        print(f"ok {name}", flush=True)
    else:
        print(f"FAIL {name}: {error}", flush=True)
    RESULTS.append((name, error is None))


def short(value: Any, limit: int = 400) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


async def run_check(name: str, fn, *args) -> bool:
    """Runs one check under a timeout guard; any exception is a FAIL with its message."""
    try:
        with anyio.fail_after(CHECK_TIMEOUT):
            await fn(*args)
    except TimeoutError:
        record(name, f"timed out after {CHECK_TIMEOUT}s (failure guard)")
        return False
    except Exception as e:  # noqa: BLE001 - a crashing check is a failed check
        record(name, short(describe(e), 800))
        return False
    record(name, None)
    return True


def describe(e: BaseException) -> str:
    """The innermost message of an exception (task groups wrap them in ExceptionGroups)."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    if isinstance(e, CheckFailed):
        return str(e)
    return traceback.format_exception_only(type(e), e)[-1].strip()


def dump(model: Any) -> dict:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def texts(result: dict) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")


def expect_error_code(result: dict, code: str) -> None:
    expect(result.get("isError") is True, f"expected isError true, got {short(result)}")
    got = (result.get("_meta") or {}).get("code")
    expect(got == code, f"expected _meta.code {code!r}, got {got!r}: {short(result)}")


# ---------------------------------------------------------------- configs


def toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def write_configs(tmp: Path, transport: str) -> dict[str, Path]:
    time_cmd = toml_list([TIME_SERVER])
    every_cmd = toml_list([NODE, EVERYTHING_JS, "stdio"])
    policy = (
        '[policy]\ndeny = ["everything__get-env"]\nask = ["everything__get-sum"]\n'
        '[budgets]\n"time__*" = "5s"\n'
    )
    main = (
        f'mode = "both"\nlanguage = "typescript"\n'
        f"[servers.time]\ncommand = {time_cmd}\n"
        f"[servers.everything]\ncommand = {every_cmd}\n" + policy
    )
    python = main.replace('language = "typescript"', 'language = "python"')
    wirelog = tmp / f"{transport}-everything.wire"
    tap_cmd = toml_list([PYTHON, str(HERE / "wiretap.py"), str(wirelog), NODE, EVERYTHING_JS, "stdio"])
    cancel = f'mode = "native"\n[servers.everything]\ncommand = {tap_cmd}\n'
    fake_cmd = toml_list([PYTHON, str(FAKE_SERVER)])
    fake = f'mode = "native"\n[servers.fake]\ncommand = {fake_cmd}\n'
    # Every tool of `fake` deferred (found with search_tools), `plain`'s listed as usual.
    deferred = (
        f'mode = "native"\n[servers.fake]\ncommand = {fake_cmd}\ndeferred = true\n'
        f"[servers.plain]\ncommand = {fake_cmd}\n"
    )
    paths = {}
    for name, text in [("main", main), ("python", python), ("cancel", cancel), ("fake", fake), ("deferred", deferred)]:
        p = tmp / f"{transport}-{name}.toml"
        p.write_text(text)
        paths[name] = p
    paths["wirelog"] = wirelog
    return paths


# ---------------------------------------------------------------- transports


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateway:
    """One gateway configuration reachable over one transport.

    stdio: every session spawns its own gateway (through stdio_client).
    http: one gateway process per configuration, shared by its sessions; started by
    `start()` in a new process group (so its upstream children can be reaped), stopped by
    PID with `stop()`.
    """

    def __init__(self, transport: str, config: Path, tmp: Path):
        self.transport = transport
        self.config = config
        self.tmp = tmp
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self.port: int | None = None
        self.stderr_path = tmp / f"{config.stem}.gateway.stderr"

    def argv(self) -> list[str]:
        return [BIN, "gateway", "--config", str(self.config)]

    async def start(self) -> None:
        if self.transport != "http":
            return
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        err = open(self.stderr_path, "ab")
        self.proc = subprocess.Popen(
            self.argv() + ["--http", f"127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            start_new_session=True,
        )
        err.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:  # wait until it accepts (guarded); it binds only after its upstreams are up
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited with {self.proc.returncode}: {self.stderr_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"gateway did not accept on {self.port} within {START_TIMEOUT}s")
                await anyio.sleep(0.05)

    def stderr_tail(self) -> str:
        try:
            return short(self.stderr_path.read_text(errors="replace")[-1500:], 1500)
        except OSError:
            return ""

    def group_alive(self) -> list[str]:
        """Live (non-zombie) processes in the gateway's process group."""
        if self.proc is None:
            return []
        out = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            state, pgrp = fields[0], int(fields[2])
            if pgrp == self.proc.pid and state != "Z":
                try:
                    cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    cmd = "?"
                out.append(f"{d.name}:{cmd.strip()[:80]}")
        return out

    def stop(self) -> tuple[int | None, list[str]]:
        """SIGINT (the gateway's shutdown signal) to our PID, then SIGKILL if it lingers;
        returns its exit code and the group members still alive 10 s later (then kills them)."""
        if self.proc is None:
            return None, []
        code = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                code = self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                code = None
        else:
            code = self.proc.returncode
        deadline = time.monotonic() + 10
        left = self.group_alive()
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = self.group_alive()
        if left:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # our own group (start_new_session)
        return code, left

    @contextlib.asynccontextmanager
    async def session(self, **kwargs):
        kwargs.setdefault("read_timeout_seconds", CHECK_TIMEOUT)
        if self.transport == "stdio":
            params = StdioServerParameters(command=self.argv()[0], args=self.argv()[1:])
            with open(self.stderr_path, "a") as errlog:
                async with stdio_client(params, errlog=errlog) as (r, w):
                    async with ClientSession(r, w, **kwargs) as s:
                        await s.initialize()
                        yield s
        else:
            async with streamable_http_client(self.url) as (r, w):
                async with ClientSession(r, w, **kwargs) as s:
                    await s.initialize()
                    yield s


# ---------------------------------------------------------------- checks 1-5, 7, 10 (main config)


def keep_logs(tmp: Path) -> None:
    """Copies the run's logs and configs to BLACKBOX_KEEP_LOGS, when it is set."""
    if os.environ.get("BLACKBOX_KEEP_LOGS"):
        keep = Path(os.environ["BLACKBOX_KEEP_LOGS"])
        keep.mkdir(parents=True, exist_ok=True)
        for f in tmp.iterdir():
            (keep / f.name).write_bytes(f.read_bytes())


def summary(started: float) -> int:
    """Prints the closing `# N ok, M failed, T s` line; the exit status (1 if any failed)."""
    failed = [n for n, good in RESULTS if not good]
    print(
        f"# {len(RESULTS) - len(failed)} ok, {len(failed)} failed, {time.monotonic() - started:.1f}s",
        flush=True,
    )
    return 1 if failed else 0
