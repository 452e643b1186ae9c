"""A tiny stdio MCP server for the gateway's black-box tests (stdlib only).

Line-delimited JSON-RPC 2.0 on stdin/stdout. It declares `tools.listChanged`, lists its
tools, and has a tool `add_tool` that adds a tool `extra` and then sends
`notifications/tools/list_changed` (before answering the call). Other notifications are
ignored; `ping` is answered; unknown requests get -32601.
"""
import json
import sys

TOOLS = {
    "add_tool": {
        "name": "add_tool",
        "description": "Adds the tool `extra` and announces it with tools/list_changed.",
        "inputSchema": {"type": "object", "properties": {}},
    },
}
EXTRA = {
    "name": "extra",
    "description": "Returns a fixed text; exists only after add_tool.",
    "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}},
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(rid, value):
    send({"jsonrpc": "2.0", "id": rid, "result": value})


def error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def text(s, is_error=False):
    return {"content": [{"type": "text", "text": s}], "isError": is_error}


def call(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name not in TOOLS:
        error(rid, -32602, f"Unknown tool: {name}")
        return
    if name == "add_tool":
        TOOLS["extra"] = EXTRA
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result(rid, text("added extra"))
    elif name == "extra":
        result(rid, text(f"extra says {args.get('word', 'hello')}"))


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "method" not in msg or "id" not in msg:
            continue  # notifications and responses are ignored
        rid, method, params = msg["id"], msg["method"], msg.get("params") or {}
        if method == "initialize":
            result(rid, {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fake", "version": "0.0.1"},
            })
        elif method == "ping":
            result(rid, {})
        elif method == "tools/list":
            result(rid, {"tools": list(TOOLS.values())})
        elif method == "tools/call":
            call(rid, params)
        else:
            error(rid, -32601, "Method not found")


if __name__ == "__main__":
    main()
