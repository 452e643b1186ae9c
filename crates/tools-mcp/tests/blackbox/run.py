#!/usr/bin/env python3
"""Black-box tests of the `tools-mcp gateway` binary, over stdio and streamable HTTP.

Runs with a Python that has `mcp` 2.3.x (stdlib + mcp + anyio only). Every check prints
`ok <name>` or `FAIL <name>: <detail>`; the exit status is 1 if any check failed.
See README.md in this folder for the environment variables.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import *  # noqa: E402,F401,F403  (the harness's names, its imports included)

TIME_TOOLS = {"time__get_current_time", "time__convert_time"}
EVERYTHING_REQUIRED = {
    "everything__echo",
    "everything__get-sum",
    "everything__get-env",
    "everything__trigger-long-running-operation",
    "everything__get-structured-content",
}


async def check_list(s: ClientSession, ctx: dict) -> None:
    tools = {t.name: dump(t) for t in (await s.list_tools()).tools}
    ctx["tools"] = tools
    names = set(tools)
    got_time = {n for n in names if n.startswith("time__")}
    expect(got_time == TIME_TOOLS, f"time tools {sorted(got_time)} != {sorted(TIME_TOOLS)}")
    missing = (EVERYTHING_REQUIRED | {"run_code"}) - names
    expect(not missing, f"missing tools {sorted(missing)}; listed {sorted(names)}")
    t = tools["time__get_current_time"]
    expect(t.get("outputSchema", {}).get("properties", {}).get("timezone"), f"no outputSchema: {short(t)}")
    expect((t.get("annotations") or {}).get("readOnlyHint") is True, f"annotations: {t.get('annotations')}")


async def check_call(s: ClientSession, ctx: dict) -> None:
    # ClientSession validates structuredContent against the listed outputSchema (raises on mismatch).
    r = dump(await s.call_tool("time__get_current_time", {"timezone": "UTC"}))
    expect(r.get("isError") is False, f"time isError: {short(r)}")
    expect((r.get("structuredContent") or {}).get("timezone") == "UTC", f"time structuredContent: {short(r)}")
    r = dump(await s.call_tool("everything__get-structured-content", {"location": "New York"}))
    expect(r.get("isError") is False, f"structured isError: {short(r)}")
    sc = r.get("structuredContent") or {}
    expect({"temperature", "conditions", "humidity"} <= set(sc), f"structuredContent: {short(r)}")
    r = dump(await s.call_tool("everything__echo", {"message": "hi"}))
    expect(r.get("isError") is False and texts(r) == "Echo: hi", f"echo: {short(r)}")


async def check_invalid_time(s: ClientSession, ctx: dict) -> None:
    expect_error_code(dump(await s.call_tool("time__get_current_time", {})), "INVALID_ARGS")


async def check_invalid_sum(s: ClientSession, ctx: dict) -> None:
    # get-sum is under `ask`; this session declares no elicitation. Invalid arguments are
    # expected to be reported as such (INVALID_ARGS), whatever the policy would decide.
    expect_error_code(dump(await s.call_tool("everything__get-sum", {"a": "x", "b": 1})), "INVALID_ARGS")


async def check_unknown(s: ClientSession, ctx: dict) -> None:
    expect_error_code(dump(await s.call_tool("nope__x", {})), "UNKNOWN_TOOL")


async def check_denied(s: ClientSession, ctx: dict) -> None:
    expect_error_code(dump(await s.call_tool("everything__get-env", {})), "DENIED")


async def check_ask_no_elicitation(s: ClientSession, ctx: dict) -> None:
    expect_error_code(dump(await s.call_tool("everything__get-sum", {"a": 1, "b": 2})), "APPROVAL_DENIED")


async def check_progress(s: ClientSession, ctx: dict) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    r = dump(
        await s.call_tool(
            "everything__trigger-long-running-operation",
            {"duration": 2, "steps": 4},
            progress_callback=on_progress,
        )
    )
    ctx["progress"] = seen
    expect(r.get("isError") is False, f"result: {short(r)}")
    expect(len(seen) >= 2, f"only {len(seen)} progress updates: {seen}")
    values = [p for p, _ in seen]
    expect(all(a < b for a, b in zip(values, values[1:])), f"progress not strictly increasing: {seen}")


async def check_progress_all(s: ClientSession, ctx: dict) -> None:
    # server-everything sends exactly `steps` updates (1/4 .. 4/4), all before its result;
    # a proxy that keeps the order forwards all of them before the result.
    seen = ctx.get("progress")
    expect(seen is not None, "the progress check did not run")
    expect([p for p, _ in seen] == [1, 2, 3, 4], f"expected updates 1..4 of 4 before the result, got {seen}")


def tool_ref(description: str, name: str, language: str) -> str:
    """How run_code's SDK (as printed in its description) says to call `name`."""
    if language == "typescript":
        if f"\n  {name}: " in description:
            return f"tools.{name}"
        expect(f'"{name}": ' in description, f"{name} not declared in run_code's TypeScript SDK")
        return f'tools["{name}"]'
    if f"async def {name}(" in description:
        return f"tools.{name}"
    expect(f'tools["{name}"]' in description, f"{name} not declared in run_code's Python SDK")
    return f'tools["{name}"]'


async def check_run_code(s: ClientSession, ctx: dict, language: str) -> None:
    tools = {t.name: dump(t) for t in (await s.list_tools()).tools}
    expect("run_code" in tools, "run_code not listed")
    desc = tools["run_code"].get("description", "")
    time_ref = tool_ref(desc, "time__get_current_time", language)
    echo_ref = tool_ref(desc, "everything__echo", language)
    if language == "typescript":
        expect("TypeScript" in desc, "run_code description does not mention TypeScript")
        code = (
            f'const t = await {time_ref}({{timezone: "UTC"}});\n'
            f'const e = await {echo_ref}({{message: "hi"}});\n'
            'console.log("called both");\n'
            "return {tz: t.timezone, echo: e};\n"
        )
    else:
        expect("Python" in desc, "run_code description does not mention Python")
        code = (
            f't = await {time_ref}({{"timezone": "UTC"}})\n'
            f'e = await {echo_ref}({{"message": "hi"}})\n'
            'print("called both")\n'
            'return {"tz": t["timezone"], "echo": e}\n'
        )
    r = dump(await s.call_tool("run_code", {"description": "Read the UTC time and echo hi", "code": code}))
    expect(r.get("isError") is False, f"run_code failed: {short(r, 1000)}")
    sc = r.get("structuredContent")
    expect(isinstance(sc, dict) and "result" in sc and isinstance(sc.get("logs"), list), f"shape: {short(r)}")
    expect("called both" in sc["logs"], f"logs: {sc['logs']}")
    res = sc["result"]
    expect(isinstance(res, dict) and res.get("tz") == "UTC", f"result tz: {short(res)}")
    expect("Echo: hi" in json.dumps(res.get("echo")), f"result echo: {short(res)}")


# ---------------------------------------------------------------- check 6 (ask with elicitation)


async def check_ask_elicitation(g: Gateway, prefix: str) -> None:
    calls: list[dict] = []
    answer = {"action": "accept"}

    async def on_elicit(context, params):
        calls.append(dump(params))
        if answer["action"] == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    async with g.session(elicitation_callback=on_elicit) as s:

        async def accept() -> None:
            calls.clear()
            answer["action"] = "accept"
            r = dump(await s.call_tool("everything__get-sum", {"a": 1, "b": 2}))
            expect(r.get("isError") is False and "3" in texts(r), f"accepted call: {short(r)}")
            expect(len(calls) == 1, f"elicitation callback called {len(calls)} times")
            p = calls[0]
            expect(p.get("mode", "form") == "form", f"elicitation mode: {short(p)}")
            props = (p.get("requestedSchema") or {}).get("properties") or {}
            expect(props.get("approve", {}).get("type") == "boolean", f"requestedSchema: {short(p)}")

        async def decline() -> None:
            calls.clear()
            answer["action"] = "decline"
            r = dump(await s.call_tool("everything__get-sum", {"a": 1, "b": 2}))
            expect_error_code(r, "APPROVAL_DENIED")
            expect(len(calls) == 1, f"elicitation callback called {len(calls)} times")

        await run_check(f"{prefix}/ask_elicitation_accept", accept)
        await run_check(f"{prefix}/ask_elicitation_decline", decline)


# ---------------------------------------------------------------- check 8 (cancellation)


def read_wire(path: Path) -> list[tuple[str, dict]]:
    out = []
    try:
        lines = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        parts = line.split(" ", 2)
        if len(parts) == 3:
            with contextlib.suppress(ValueError):
                out.append((parts[1], json.loads(parts[2])))
    return out


def upstream_call_ids(wire: list[tuple[str, dict]], tool: str) -> list:
    return [
        m["id"]
        for tag, m in wire
        if tag == "C->S" and m.get("method") == "tools/call" and (m.get("params") or {}).get("name") == tool
    ]


async def wait_wire(wirelog: Path, what: str, found, timeout: float):
    """Polls the wire log (a file: no event to await) until `found(wire)` is truthy."""
    deadline = time.monotonic() + timeout
    while True:
        wire = read_wire(wirelog)
        hit = found(wire)
        if hit:
            return hit
        if time.monotonic() > deadline:
            last = [f"{tag} {short(m, 200)}" for tag, m in wire[-6:]]
            raise CheckFailed(f"{what} not seen on the gateway<->server wire within {timeout}s; last lines: {last}")
        await anyio.sleep(0.05)


async def check_cancel(g: Gateway, wirelog: Path, prefix: str) -> None:
    tool = "trigger-long-running-operation"
    client_progress = anyio.Event()

    async def on_progress(progress, total, message) -> None:
        client_progress.set()

    async with g.session() as s:

        async def cancel() -> None:
            async with anyio.create_task_group() as tg:

                async def long_call() -> None:
                    r = await s.call_tool(
                        f"everything__{tool}", {"duration": 30, "steps": 30}, progress_callback=on_progress
                    )
                    raise CheckFailed(f"the 30 s call completed before it was cancelled: {short(dump(r))}")

                tg.start_soon(long_call)
                # The server's first progress update reaches the gateway (seen on the wire)...
                await wait_wire(
                    wirelog,
                    "the server's first notifications/progress",
                    lambda w: any(t == "S->C" and m.get("method") == "notifications/progress" for t, m in w),
                    20,
                )
                # ...and must reach the client; the cancel is sent after it (or after this guard).
                problem = None
                try:
                    with anyio.fail_after(5):
                        await client_progress.wait()
                except TimeoutError:
                    problem = (
                        "the server sent notifications/progress for the call but none reached the "
                        "client within 5 s; cancelling anyway"
                    )
                record(f"{prefix}/cancel_progress_forwarded", problem)
                tg.cancel_scope.cancel()  # the client sends notifications/cancelled to the gateway
            ids = upstream_call_ids(read_wire(wirelog), tool)
            expect(len(ids) == 1, f"expected 1 upstream tools/call of {tool}, saw ids {ids}")
            await wait_wire(
                wirelog,
                f"notifications/cancelled for upstream request id {ids[0]}",
                lambda w: [
                    m
                    for t, m in w
                    if t == "C->S"
                    and m.get("method") == "notifications/cancelled"
                    and (m.get("params") or {}).get("requestId") == ids[0]
                ],
                CANCEL_LOG_TIMEOUT,
            )

        async def follow_up() -> None:
            r = dump(await s.call_tool("everything__echo", {"message": "after cancel"}))
            expect(r.get("isError") is False and texts(r) == "Echo: after cancel", f"echo: {short(r)}")

        await run_check(f"{prefix}/cancel_reaches_server", cancel)
        await run_check(f"{prefix}/cancel_then_serves", follow_up)


# ---------------------------------------------------------------- check 9 (list_changed)


async def check_list_changed(g: Gateway, prefix: str) -> None:
    changed = anyio.Event()
    counter = {"n": 0}

    async def on_message(msg) -> None:
        method = getattr(msg, "method", None)
        if method == "notifications/tools/list_changed":
            counter["n"] += 1
            changed.set()

    async with g.session(message_handler=on_message) as s:

        async def run() -> None:
            before = {t.name for t in (await s.list_tools()).tools}
            expect("fake__add_tool" in before, f"fake__add_tool not listed: {sorted(before)}")
            expect("fake__extra" not in before, "fake__extra listed before add_tool")
            r = dump(await s.call_tool("fake__add_tool", {}))
            expect(r.get("isError") is False, f"add_tool: {short(r)}")
            try:
                with anyio.fail_after(10):
                    await changed.wait()
            except TimeoutError:
                raise CheckFailed("no notifications/tools/list_changed reached the client within 10 s")
            after = {t.name for t in (await s.list_tools()).tools}
            expect("fake__extra" in after, f"fake__extra not listed after list_changed: {sorted(after)}")
            r = dump(await s.call_tool("fake__extra", {"word": "yo"}))
            expect(r.get("isError") is False and texts(r) == "extra says yo", f"fake__extra: {short(r)}")

        await run_check(f"{prefix}/list_changed", run)


# ---------------------------------------------------------------- check 13 (deferred tools, search_tools)

PLAIN_TOOLS = {"plain__echo", "plain__crash", "plain__add_tool", "plain__slow"}


async def check_deferred(g: Gateway, prefix: str) -> None:
    """A deferred server's tools are not listed; `search_tools` finds one, loads it for this
    session (which gets list_changed), and it is listed and callable; another session of the
    same gateway (over HTTP; over stdio each session is a gateway of its own) has not loaded it."""
    changed = anyio.Event()

    async def on_message(msg) -> None:
        if getattr(msg, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async with g.session(message_handler=on_message) as s:

        async def search_loads() -> None:
            tools = {t.name: dump(t) for t in (await s.list_tools()).tools}
            before = list(tools)
            expect(set(before) == PLAIN_TOOLS | {"search_tools"}, f"listed {sorted(before)}")
            schema = tools["search_tools"].get("inputSchema") or {}
            expect(schema.get("required") == ["query"], f"search_tools inputSchema: {short(schema)}")
            limit = (schema.get("properties") or {}).get("limit") or {}
            expect((limit.get("minimum"), limit.get("maximum")) == (1, 50), f"limit: {short(limit)}")
            r = dump(await s.call_tool("fake__echo", {"text": "x"}))
            expect_error_code(r, "UNKNOWN_TOOL")
            expect("search_tools" in texts(r), f"the refusal does not name search_tools: {short(r)}")
            r = dump(await s.call_tool("search_tools", {"query": "echo the text", "limit": 3}))
            expect(r.get("isError") is False, f"search_tools: {short(r)}")
            lines = texts(r).splitlines()
            expect(lines and lines[0] == "fake__echo: Echo the text.", f"search_tools text: {short(r)}")
            expect(len(lines) <= 3 and all(l.startswith("fake__") for l in lines), f"search_tools text: {short(r)}")
            found = [t["name"] for t in (r.get("structuredContent") or {}).get("tools", [])]
            expect(found == [l.split(":")[0] for l in lines], f"structuredContent {found} != text {lines}")
            try:
                with anyio.fail_after(10):
                    await changed.wait()
            except TimeoutError:
                raise CheckFailed("no notifications/tools/list_changed reached the client within 10 s of the search")
            after = [t.name for t in (await s.list_tools()).tools]
            expect(after == before + found, f"listed after the search: {after}; expected {before} + {found}")
            r = dump(await s.call_tool("fake__echo", {"text": "found"}))
            expect(r.get("isError") is False and texts(r) == "found", f"fake__echo after the search: {short(r)}")

        async def bad_queries() -> None:
            for args, needle in [({"query": ""}, "empty"), ({"query": "x" * 10_000}, "at most 1000"),
                                 ({"query": "echo", "limit": 0}, "from 1 to 50")]:
                r = dump(await s.call_tool("search_tools", args))
                expect_error_code(r, "INVALID_ARGS")
                expect(needle in texts(r), f"{short(args, 60)}: the message does not say {needle!r}: {short(r)}")

        await run_check(f"{prefix}/deferred_search_loads", search_loads)
        await run_check(f"{prefix}/deferred_bad_queries", bad_queries)

    async with g.session() as s:

        async def other_session() -> None:
            names = {t.name for t in (await s.list_tools()).tools}
            expect(names == PLAIN_TOOLS | {"search_tools"}, f"another session lists {sorted(names)}")
            r = dump(await s.call_tool("fake__echo", {"text": "x"}))
            expect_error_code(r, "UNKNOWN_TOOL")

        await run_check(f"{prefix}/deferred_other_session", other_session)


async def check_deferred_refusals(cfg: dict[str, Path], tmp: Path) -> None:
    """`--check` refuses a bad `deferred` glob naming the key and its line; `--stateless`
    refuses a config that defers (nothing could load a tool between requests)."""
    bad = tmp / "deferred-bad.toml"
    bad.write_text('mode = "native"\ndeferred = ["fake__*", "fake__[x"]\n')

    async def bad_glob() -> None:
        with anyio.fail_after(30):
            proc = await anyio.run_process([BIN, "gateway", "--config", str(bad), "--check"], check=False)
        err = proc.stderr.decode(errors="replace")
        expect(proc.returncode != 0, f"--check accepted a bad glob: rc={proc.returncode} stderr={short(err)}")
        expect("line 2" in err and "`deferred`" in err and "fake__[x" in err, f"stderr: {short(err)}")

    async def stateless() -> None:
        argv = [BIN, "gateway", "--config", str(cfg["deferred"]), "--http", "127.0.0.1:0", "--stateless"]
        with anyio.fail_after(30):
            proc = await anyio.run_process(argv, check=False)
        err = proc.stderr.decode(errors="replace")
        expect(proc.returncode != 0 and "--stateless" in err, f"rc={proc.returncode} stderr={short(err)}")

    await run_check("deferred/check_bad_glob", bad_glob)
    await run_check("deferred/stateless_refused", stateless)


# ---------------------------------------------------------------- check 11 (inspector CLI)


async def inspector(target: list[str], method_args: list[str], target_rest: list[str]) -> tuple[int, Any, str]:
    cmd = [NODE, INSPECTOR_JS, *target, *method_args]
    if target_rest:
        cmd += ["--", *target_rest]
    proc = await anyio.run_process(cmd, check=False)
    out = proc.stdout.decode(errors="replace")
    err = proc.stderr.decode(errors="replace")
    parsed = None
    with contextlib.suppress(ValueError):
        parsed = json.loads(out)
    return proc.returncode, parsed, f"rc={proc.returncode} stdout={short(out)} stderr={short(err)}"


async def check_inspector(g: Gateway, prefix: str) -> None:
    if g.transport == "stdio":
        target, rest = [BIN], g.argv()[1:]  # `BIN --method ... -- gateway --config FILE`
    else:
        target, rest = [g.url], []

    async def tools_list() -> None:
        rc, out, info = await inspector(target, ["--method", "tools/list"], rest)
        expect(rc == 0 and isinstance(out, dict), info)
        names = {t["name"] for t in out.get("tools", [])}
        expect(TIME_TOOLS | {"run_code", "everything__echo"} <= names, f"names {sorted(names)}")

    async def tools_call() -> None:
        args = ["--method", "tools/call", "--tool-name", "time__get_current_time", "--tool-arg", "timezone=UTC"]
        rc, out, info = await inspector(target, args, rest)
        expect(rc == 0 and isinstance(out, dict), info)
        expect(out.get("isError", False) is False, info)  # isError is optional (default false)
        expect((out.get("structuredContent") or {}).get("timezone") == "UTC", info)

    async def denied() -> None:
        rc, out, info = await inspector(target, ["--method", "tools/call", "--tool-name", "everything__get-env"], rest)
        expect(rc == 0 and isinstance(out, dict), info)
        expect(out.get("isError") is True, info)
        expect((out.get("_meta") or {}).get("code") == "DENIED", info)

    await run_check(f"{prefix}/inspector_tools_list", tools_list)
    await run_check(f"{prefix}/inspector_tools_call", tools_call)
    await run_check(f"{prefix}/inspector_denied", denied)


# ---------------------------------------------------------------- driver


async def session_checks(g: Gateway, prefix: str, checks: list) -> None:
    """Runs `checks` (name, fn, *args) in one session; a session that cannot start fails them all."""
    ctx: dict = {}
    try:
        async with g.session() as s:
            for name, fn, *args in checks:
                await run_check(f"{prefix}/{name}", fn, s, ctx, *args)
    except Exception as e:  # noqa: BLE001
        record(f"{prefix}/session", f"{short(describe(e), 600)}; gateway stderr: {g.stderr_tail()}")


async def check_modern_client(g: Gateway, prefix: str) -> None:
    """The SDK's high-level `mcp.Client` (default mode "auto"): it tries `server/discover`
    and the 2026-07-28 protocol first, where results must carry `resultType`."""
    import mcp

    async def run() -> None:
        if g.transport == "stdio":
            target = StdioServerParameters(command=g.argv()[0], args=g.argv()[1:])
        else:
            target = g.url
        async with mcp.Client(target) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            expect("time__get_current_time" in names, f"not listed: {sorted(names)}")
            r = dump(await c.call_tool("time__get_current_time", {"timezone": "UTC"}))
            structured = r.get("structuredContent") or {}
            expect(
                not r.get("isError") and structured.get("timezone") == "UTC",
                f"call through mcp.Client: {short(r)}",
            )
            denied = dump(await c.call_tool("everything__get-env", {}))
            expect_error_code(denied, "DENIED")

    await run_check(f"{prefix}/modern_client", run)


async def run_transport(transport: str, tmp: Path) -> None:
    cfg = write_configs(tmp, transport)
    gws = {name: Gateway(transport, cfg[name], tmp) for name in ("main", "python", "cancel", "fake", "deferred")}
    try:
        for name, g in gws.items():
            try:
                with anyio.fail_after(START_TIMEOUT + 5):
                    await g.start()
            except Exception as e:  # noqa: BLE001
                record(f"{transport}/start_{name}", str(e))
                return
        main = gws["main"]
        await session_checks(
            main,
            transport,
            [
                ("list", check_list),
                ("call", check_call),
                ("invalid_args_time", check_invalid_time),
                ("invalid_args_get_sum", check_invalid_sum),
                ("unknown_tool", check_unknown),
                ("denied", check_denied),
                ("ask_without_elicitation", check_ask_no_elicitation),
                ("progress", check_progress),
                ("progress_all_forwarded", check_progress_all),
                ("run_code_typescript", check_run_code, "typescript"),
            ],
        )
        await check_modern_client(main, transport)
        try:
            await check_ask_elicitation(main, transport)
        except Exception as e:  # noqa: BLE001
            record(f"{transport}/ask_elicitation_session", short(describe(e), 600))
        await session_checks(gws["python"], transport, [("run_code_python", check_run_code, "python")])
        try:
            await check_cancel(gws["cancel"], cfg["wirelog"], transport)
        except Exception as e:  # noqa: BLE001
            record(f"{transport}/cancel_session", short(describe(e), 600))
        try:
            await check_list_changed(gws["fake"], transport)
        except Exception as e:  # noqa: BLE001
            record(f"{transport}/list_changed_session", short(describe(e), 600))
        try:
            await check_deferred(gws["deferred"], transport)
        except Exception as e:  # noqa: BLE001
            record(f"{transport}/deferred_session", short(describe(e), 600))
        if transport == "http":
            await check_deferred_refusals(cfg, tmp)
        await check_inspector(main, transport)
    finally:
        if transport == "http":
            for name, g in gws.items():
                code, left = g.stop()
                detail = None
                if code != 0:
                    detail = f"exit code {code} after SIGINT (expected 0); stderr: {g.stderr_tail()}"
                elif left:
                    detail = f"processes of the gateway's group still alive 10 s after it exited: {left}"
                record(f"http/shutdown_{name}", detail)


async def main() -> int:
    for path, what in [(BIN, "TOOLS_MCP_BIN"), (TIME_SERVER, "MCP_PYTHON_SERVER_TIME"),
                       (EVERYTHING_JS, "MCP_EVERYTHING_JS"), (INSPECTOR_JS, "MCP_INSPECTOR_JS")]:
        if not Path(path).exists():
            print(f"FAIL setup: {what}={path} does not exist", flush=True)
            return 1
    st = os.stat(BIN)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime))
    print(f"# binary {BIN} ({st.st_size} bytes, modified {stamp})", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tools-mcp-blackbox-") as d:
        tmp = Path(d)
        for transport in ("stdio", "http"):
            await run_transport(transport, tmp)
        keep_logs(tmp)
    return summary(started)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
