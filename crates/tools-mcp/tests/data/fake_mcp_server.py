"""A minimal MCP server over stdio (line-delimited JSON-RPC), standard library only.

Written for the tools-mcp tests (MIT OR Apache-2.0, like the workspace). Tools:
- `echo` {text}: returns the text (readOnlyHint);
- `crash`: the process exits before answering (a server that dies mid-call);
- `add_tool`: adds a tool `extra`, then sends notifications/tools/list_changed;
- `extra` (after add_tool): returns "extra", or "extra says <word>" given {word};
- `slow`: sends one progress notification (when the request has a progress token) and
  never answers; the id of every request the client cancels is appended to the file named
  by the FAKE_MCP_CANCEL_LOG environment variable.
"""

import json
import os
import sys

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"text": {"type": "string", "minLength": 1, "default": "x", "not": {"const": "forbidden"}}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {"name": "crash", "description": "Exit mid-call.", "inputSchema": {"type": "object"}},
    {"name": "add_tool", "description": "Add a tool.", "inputSchema": {"type": "object"}},
    {"name": "slow", "description": "Never answers.", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(rid, value):
    send({"jsonrpc": "2.0", "id": rid, "result": value})


def text(rid, value):
    result(rid, {"content": [{"type": "text", "text": value}], "isError": False})


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method = msg.get("method")
    rid = msg.get("id")
    params = msg.get("params") or {}
    if method == "initialize":
        result(rid, {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "fake", "version": "1"},
        })
    elif method == "tools/list":
        result(rid, {"tools": TOOLS})
    elif method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            text(rid, args.get("text", ""))
        elif name == "crash":
            sys.exit(3)
        elif name == "add_tool":
            if not any(t["name"] == "extra" for t in TOOLS):
                TOOLS.append({
                    "name": "extra",
                    "description": "Added.",
                    "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}},
                })
            text(rid, "added")
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        elif name == "extra":
            word = args.get("word")
            text(rid, "extra says %s" % word if word else "extra")
        elif name == "slow":
            token = (params.get("_meta") or {}).get("progressToken")
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": 1}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "Unknown tool: %s" % name}})
    elif method == "notifications/cancelled":
        log = os.environ.get("FAKE_MCP_CANCEL_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps(params.get("requestId")) + "\n")
    elif method == "ping":
        result(rid, {})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
