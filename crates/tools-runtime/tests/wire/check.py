#!/usr/bin/env python3
"""The provider adapters' JSON against the official Python SDKs' own types.

Usage: check.py RESPONSES.json CHAT.json ANTHROPIC.json SEARCH.json — the requests the
examples `openai_turn`, `openai_turn --chat`, `anthropic_turn` and `search_turn` print. Each is validated as the SDK's
request parameters (pydantic over the SDK's TypedDicts), every tool declaration and result
item also against its own type with no key outside it, and the step's shape is checked:
one result per call, in the model's order, contexts after every result. Written for this
project (MIT OR Apache-2.0, like the workspace); runs with `openai` and `anthropic` installed
(`cargo xtask wire-check` does it).
"""
import json
import sys

from pydantic import TypeAdapter

from openai.types.chat import ChatCompletionToolParam
from openai.types.chat.chat_completion_tool_message_param import ChatCompletionToolMessageParam
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses import FunctionToolParam, NamespaceToolParam, ToolSearchToolParam
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from openai.types.responses.response_input_item_param import FunctionCallOutput, ToolSearchCall
from openai.types.responses.response_tool_search_output_item_param_param import (
    ResponseToolSearchOutputItemParamParam,
)
from anthropic.types import ToolParam, ToolResultBlockParam
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

FAILED = []


def check(name, ok, detail=""):
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        FAILED.append(name)


def typed(name, td, value):
    """Validates `value` as the TypedDict `td` and refuses keys `td` does not declare."""
    try:
        TypeAdapter(td).validate_python(value)
    except Exception as e:  # noqa: BLE001 (report any validation failure)
        check(name, False, str(e)[:800])
        return
    keys = set(getattr(td, "__required_keys__", set())) | set(getattr(td, "__optional_keys__", set()))
    extra = sorted(set(value) - keys) if keys else []
    check(name, not extra, f"keys the SDK type does not declare: {extra}")


def responses(path):
    request = json.load(open(path))
    typed("responses/request", ResponseCreateParamsNonStreaming, request)
    for tool in request["tools"]:
        typed(f"responses/tool {tool['name']}", FunctionToolParam, tool)
    calls = [i["call_id"] for i in request["input"] if i.get("type") == "function_call"]
    outputs = [i for i in request["input"] if i.get("type") == "function_call_output"]
    for item in outputs:
        typed(f"responses/output {item['call_id']}", FunctionCallOutput, item)
    check("responses/one output per call, in order", [o["call_id"] for o in outputs] == calls,
          f"{[o['call_id'] for o in outputs]} != {calls}")
    last_output = max(i for i, item in enumerate(request["input"]) if item.get("type") == "function_call_output")
    contexts = [i for i, item in enumerate(request["input"]) if item.get("type") == "message"]
    check("responses/contexts after every output", bool(contexts) and all(i > last_output for i in contexts), str(contexts))
    by_id = {o["call_id"]: o["output"] for o in outputs}
    check("responses/broken arguments are INVALID_ARGS", "invalid arguments" in by_id.get("call_broken", ""), by_id.get("call_broken", ""))
    check("responses/unknown tool", "unknown tool" in by_id.get("call_unknown", ""), by_id.get("call_unknown", ""))


def chat(path):
    request = json.load(open(path))
    typed("chat/request", CompletionCreateParamsNonStreaming, request)
    for tool in request["tools"]:
        typed(f"chat/tool {tool['function']['name']}", ChatCompletionToolParam, tool)
    assistant = next(m for m in request["messages"] if m.get("role") == "assistant")
    calls = [c["id"] for c in assistant["tool_calls"]]
    tools = [m for m in request["messages"] if m.get("role") == "tool"]
    for m in tools:
        typed(f"chat/tool message {m['tool_call_id']}", ChatCompletionToolMessageParam, m)
    check("chat/one tool message per call, in order", [m["tool_call_id"] for m in tools] == calls,
          f"{[m['tool_call_id'] for m in tools]} != {calls}")
    roles = [m["role"] for m in request["messages"]]
    last_tool = max(i for i, r in enumerate(roles) if r == "tool")
    check("chat/contexts after every tool message", roles[-1] == "user" and len(roles) - 1 > last_tool, str(roles))


def anthropic(path):
    request = json.load(open(path))
    typed("anthropic/request", MessageCreateParamsNonStreaming, request)
    for tool in request["tools"]:
        typed(f"anthropic/tool {tool['name']}", ToolParam, tool)
    assistant = next(m for m in request["messages"] if m["role"] == "assistant")
    calls = [b["id"] for b in assistant["content"] if b["type"] == "tool_use"]
    reply = request["messages"][-1]
    check("anthropic/results in one user message", reply["role"] == "user")
    blocks = reply["content"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    for b in results:
        typed(f"anthropic/tool_result {b['tool_use_id']}", ToolResultBlockParam, b)
    check("anthropic/one tool_result per call, in order", [b["tool_use_id"] for b in results] == calls,
          f"{[b['tool_use_id'] for b in results]} != {calls}")
    kinds = [b["type"] for b in blocks]
    first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
    check("anthropic/tool results first, then the contexts",
          all(k == "tool_result" for k in kinds[:first_other]) and "tool_result" not in kinds[first_other:] and first_other < len(kinds),
          str(kinds))
    errors = {b["tool_use_id"]: b["is_error"] for b in results}
    check("anthropic/is_error marks the failures",
          errors == {"toolu_weather_paris": False, "toolu_weather_oslo": False, "toolu_convert": True, "toolu_unknown": True},
          str(errors))


def search_responses(step):
    for when in ("after_search", "after_call"):
        request = step[when]
        typed(f"search/responses/{when}/request", ResponseCreateParamsNonStreaming, request)
        kinds = {"function": FunctionToolParam, "namespace": NamespaceToolParam, "tool_search": ToolSearchToolParam}
        for tool in request["tools"]:
            typed(f"search/responses/{when}/tool {tool.get('name', tool['type'])}", kinds[tool["type"]], tool)
    request = step["after_call"]
    deferred = [t for t in request["tools"] if t.get("defer_loading")]
    deferred += [f for t in request["tools"] if t["type"] == "namespace" for f in t["tools"]]
    check("search/responses/deferred tools declared with defer_loading",
          sorted(t["name"] for t in deferred) == ["get_weather", "hotels__book_room", "trains__timetable"]
          and all(t.get("defer_loading") for t in deferred), str([t["name"] for t in deferred]))
    check("search/responses/one client tool_search",
          [t.get("execution") for t in request["tools"] if t["type"] == "tool_search"] == ["client"], "")
    calls = [i for i in request["input"] if i.get("type") == "tool_search_call"]
    outputs = [i for i in request["input"] if i.get("type") == "tool_search_output"]
    for item in calls:
        typed(f"search/responses/tool_search_call {item['call_id']}", ToolSearchCall, item)
    for item in outputs:
        typed(f"search/responses/tool_search_output {item['call_id']}", ResponseToolSearchOutputItemParamParam, item)
        for tool in item["tools"]:
            typed(f"search/responses/loaded tool {tool['name']}", FunctionToolParam, tool)
    check("search/responses/the output answers the call and loads get_weather",
          [o["call_id"] for o in outputs] == [c["call_id"] for c in calls] == ["call_search"]
          and [t["name"] for t in outputs[0]["tools"]] == ["get_weather"], str(outputs))
    ran = [i for i in request["input"] if i.get("type") == "function_call_output"]
    check("search/responses/the loaded tool's call ran", [o["output"] for o in ran] == ["get_weather ran"], str(ran))


def search_chat(step):
    for when in ("after_search", "after_call"):
        request = step[when]
        typed(f"search/chat/{when}/request", CompletionCreateParamsNonStreaming, request)
        for tool in request["tools"]:
            typed(f"search/chat/{when}/tool {tool['function']['name']}", ChatCompletionToolParam, tool)
        for m in request["messages"]:
            if m.get("role") == "tool":
                typed(f"search/chat/{when}/tool message {m['tool_call_id']}", ChatCompletionToolMessageParam, m)
    before = [t["function"]["name"] for t in step["after_search"]["tools"]]
    after = [t["function"]["name"] for t in step["after_call"]["tools"]]
    check("search/chat/search_tools declared, deferred tools not", before == ["get_time", "search_tools"], str(before))
    check("search/chat/the found tool is declared from the next request on",
          after == ["get_time", "get_weather", "search_tools"], str(after))
    listing = next(m["content"] for m in step["after_search"]["messages"] if m.get("tool_call_id") == "call_search")
    check("search/chat/the listing names the tool with its schema", "get_weather" in listing and '"parameters"' in listing, listing[:300])
    ran = [m["content"] for m in step["after_call"]["messages"] if m.get("tool_call_id") == "call_weather"]
    check("search/chat/the loaded tool's call ran", ran == ["get_weather ran"], str(ran))


def search_anthropic(step):
    for when in ("after_search", "after_call"):
        request = step[when]
        typed(f"search/anthropic/{when}/request", MessageCreateParamsNonStreaming, request)
        for tool in request["tools"]:
            typed(f"search/anthropic/{when}/tool {tool['name']}", ToolParam, tool)
    request = step["after_call"]
    deferred = sorted(t["name"] for t in request["tools"] if t.get("defer_loading"))
    check("search/anthropic/deferred tools declared with defer_loading",
          deferred == ["get_weather", "hotels__book_room", "trains__timetable"], str(deferred))
    results = [b for m in request["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    for b in results:
        typed(f"search/anthropic/tool_result {b['tool_use_id']}", ToolResultBlockParam, b)
    by_id = {b["tool_use_id"]: b for b in results}
    references = by_id.get("toolu_search", {}).get("content", [])
    check("search/anthropic/the search answers with tool_reference blocks",
          references == [{"type": "tool_reference", "tool_name": "get_weather"}], str(references))
    weather = by_id.get("toolu_weather", {})
    check("search/anthropic/the loaded tool's call ran",
          weather.get("is_error") is False and weather.get("content", [{}])[0].get("text") == "get_weather ran", str(weather))


def search(path):
    steps = json.load(open(path))
    search_responses(steps["responses"])
    search_chat(steps["chat"])
    search_anthropic(steps["anthropic"])


responses(sys.argv[1])
chat(sys.argv[2])
anthropic(sys.argv[3])
search(sys.argv[4])
print(f"# {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
