# Well-typed calls of every tool in catalog.json, checked by `cargo xtask sdk-check` with
# `mypy --strict` against the Python SDK rendered from that catalog (sdk.py).
#
# A run_code program is the body of an async function in which only `tools` and
# `ToolCallError` are bound; this file wraps it in one and imports the TypedDict stubs for
# annotations only. Tools reached by subscript are declared as `__getitem__` overloads
# typed by a `Literal` of their name, so their calls are checked like method calls.
import asyncio
from typing import Any, Literal

from sdk import (
    ABArgs,
    ABArgs2,
    ClassArgs,
    FIndArgs,
    MetaArgs,
    MyToolArgs,
    MyToolArgs2,
    ObjectsOutput,
    TokenArgs,
    Tool1stToolArgs,
    ToolCallError,
    TooĺabcArgs,
    UnionOutput1,
    UnionOutput2,
    tools,
)


async def main() -> None:
    # Scalars, enums, consts and exact numbers.
    ok: bool = (await tools.scalars({"s": "text", "n": 1.5, "i": 2, "b": True, "z": None}))["ok"]
    status: Literal["done", "skipped"] = await tools.enums(
        {"color": "blue|sky", "level": 3, "ratio": 0.5, "flag": True, "nothing": None, "whole": 2}
    )
    big: Literal[1152921504606846976] = await tools.consts(
        {"kind": "fixed", "version": 2, "pi": 3.25, "yes": True, "pick": "a", "nil": None}
    )
    tiny: float = await tools.big_numbers({"huge": 9007199254740993, "sci": 1e21, "wide": 1000000000000000000000})
    await tools.literal_escapes({"s": "nl\n"})
    await tools.literal_escapes({"s": "say \"hi\""})
    quoted: Literal["a\"b"] = await tools.literal_escapes({"s": "nel\x85 ls\u2028 ps\u2029"})

    # Unions: the output is one of two TypedDicts.
    union: UnionOutput1 | UnionOutput2 = await tools.union({"value": None})
    await tools.union({"value": "text"})
    await tools.union({"value": 7})

    # Arrays and objects.
    matrix: list[list[int]] = await tools.arrays(
        {
            "numbers": [1, 2.5],
            "anything": [1, "two", None, {"three": [3]}],
            "grid": [["a", None], []],
            "tags": ["x", "y"],
            "bars": ["a|b"],
            "amp": ["a&b"],
            "rows": [{"a": "x"}],
            "cells": [{"a": "y"}],
        }
    )
    anything: Any = await tools.any_json({"value": {"nested": [1, None]}, "note": "any"})
    objects: ObjectsOutput = await tools.objects(
        {
            "open": {"a": "x"},
            "closed": {},
            "open_empty": {"any": "thing"},
            "closed_empty": {},
            "closed_empty_props": {},
            "open_empty_props": {},
        }
    )
    value: str = objects["nested"]["deep"]["value"]
    grids = await tools.deep_lists({"grid": []})
    maybe: str | None = await tools.deep_union({})
    await tools.deep_objects({"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": {"level": "deep"}}}}}}}}}}}}}}}}}}}}}}}}}}}}}})
    closed_args = await tools.closed_args({"mode": {"a": "x"}, "empty": {}})
    n: Literal[1, 2] = closed_args[0]["n"]
    await tools.closed_args({"mode": None, "empty": {}})

    # Unsupported schemas degrade to `Any`.
    degraded: Any = await tools.unsupported({"a": 1})
    malformed: bool = (await tools.malformed("anything"))["ok"]

    # Descriptions of every kind.
    await tools.no_description({})
    await tools.blank_description({"x": "x"})
    await tools.descriptions({"a": "x", "b": 1})
    await tools.plain({"anything": [1]})

    # Names: methods, and subscript access for the names declared by `__getitem__`.
    shell = await tools.bash({"command": "ls", "workdir": "/tmp"})
    code: int | None = shell["exitCode"]
    count: int = (await tools.todo_write({"todos": [{"content": "a", "status": "done"}]}))["count"]
    exotic: list[str] = await tools["my-mcp.tool"]({})
    class_args: ClassArgs = {"value": "v"}
    await tools["class"](class_args)
    await tools["_private"]({})
    meta_args: MetaArgs = {"x": 1}
    await tools["__meta__"](meta_args)
    token_args: TokenArgs = {"x": 1}
    await tools["__token"](token_args)
    await tools["__proto__"]({})
    first_args: Tool1stToolArgs = {"ok": True}
    await tools["1st-tool"](first_args)
    find_args: FIndArgs = {"q": "query"}
    await tools["\ufb01nd"](find_args)
    await tools.搜索({"opts": {"路径": "/", "深度": 2}})
    await tools.ünï({"x": "x"})
    zwnj_args: ABArgs2 = {"x": "x"}
    await tools["a\u200cb"](zwnj_args)
    mark_args: TooĺabcArgs = {"x": "x"}
    await tools["\u0301abc"](mark_args)
    await tools.ƛx({"x": "x"})
    dash_args: MyToolArgs = {"x": "x"}
    await tools["my-tool"](dash_args)
    dot_args: MyToolArgs2 = {"y": "y"}
    await tools["my.tool"](dot_args)
    bar_args: ABArgs = {"x": "x"}
    await tools["a|b"](bar_args)
    await tools["list"]({})
    await tools["str"]({})
    await tools.match({"case": "c", "type": "t", "_": 1})
    await tools.type({})
    await tools["$dollar"]({"$ok": "x"})
    await tools.𐐀𐐨({"x": "x"})
    await tools.a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_very_long_tool_name_a_({"nested": {"x": "x"}})
    await tools.fields_ok(
        {"match": "m", "case": "c", "type": "t", "_": "u", "__meta__": "d", "路径": "p", "深度": 1, "str": "s", "list": 2}
    )
    await tools.fields_degrade({"my-key": "k", "1abc": "a", "": "e", "$ok": "o", "class": "c", "__token": "t"})
    await tools.phases({"phase": {"v": "a"}, "phase2": {"v": "b"}, "Phase": {"v": "c"}})
    await tools.hangul({"\uac00": {"\u11a8": {"y": "y"}}, "\uac01": {"z": "z"}})
    await tools.foo({"args": {"x": "x"}})
    await tools.foo_args({"y": "y"})
    await tools["FooArgs"]({})

    # Overlap and errors.
    described, listed = await asyncio.gather(tools.descriptions({"a": "x"}), tools.no_description({}))
    try:
        await tools.bash({"command": "false"})
    except ToolCallError as error:
        failed: str = error.toolName
        print(failed, error)
    print(ok, status, big, tiny, quoted, union, matrix, anything, value, grids, maybe, n)
    print(degraded, malformed, code, count, exotic, described, listed)

    # The tool-search helpers (the SDK is rendered as for a scope with deferred tools).
    hits = await tools.search_tools("weather", limit=3)
    more = await tools.search_tools("weather")
    signature: str = hits[0]["signature"]
    about = await tools.describe_tool(hits[0]["name"])
    if about is not None:
        schema: dict[str, Any] = about["parameters"]
        print(schema, about["description"])
    print(signature, len(more))
