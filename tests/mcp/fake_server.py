"""A small MCP server over stdio that misbehaves on purpose, for the gateway's fault tests
(tests/mcp_gateway.rs). Standard library only.

    python3 fake_server.py [MODE]

MODE `crash-init` exits with status 3 on `initialize`; `silent-init` never answers it;
`stateless` answers `server/discover` (the stateless revision, 2026-07-28), which the other
modes refuse as a method they do not have. Otherwise it answers `initialize`; lists its tools in two pages (`tools/list`, `nextCursor`),
one resource `fake://one` (`resources/list`, `resources/read`; another URI is -32002); answers
other requests with an empty result; and runs these tools:

- `sleep {seconds}`: answers after sleeping (a thread per call, so cancellations arrive);
- `exit`: exits with status 7 without answering;
- `huge {bytes}`: writes a line of that many bytes;
- `ask`: asks the client `sampling/createMessage`, sends a log message first, and answers
  with the client's result;
- `progress`: sends two progress notifications for the call's token, then answers;
- `cancels`: answers with the request ids of the cancellations it has received;
- `flood {count, bytes}`: sends that many log messages of that size, then answers;
- `pid`: answers with its process id;
- `ask-then-cancel`: asks the client `sampling/createMessage`, cancels that request, answers;
- `announce`: sends `notifications/tools/list_changed` and `notifications/custom` (outside
  any request), then answers.
"""
import json
import os
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
out_lock = threading.Lock()
cancelled = []
waiting = {}  # id of a request to the client -> (event, [answer])


def send(message):
    line = json.dumps(message, separators=(",", ":"))
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def answer(request_id, text):
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})


def call_tool(request):
    request_id = request["id"]
    params = request.get("params") or {}
    name = params.get("name")
    args = params.get("arguments") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    if name == "sleep":
        time.sleep(float(args.get("seconds", 1)))
        answer(request_id, "slept")
    elif name == "exit":
        sys.stdout.flush()
        os._exit(7)
    elif name == "huge":
        with out_lock:
            sys.stdout.write("x" * int(args.get("bytes", 1 << 20)) + "\n")
            sys.stdout.flush()
    elif name == "ask":
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "asking"}})
        event = threading.Event()
        box = []
        waiting["ask-1"] = (event, box)
        send({"jsonrpc": "2.0", "id": "ask-1", "method": "sampling/createMessage",
              "params": {"messages": [], "maxTokens": 5}})
        event.wait(10)
        answer(request_id, json.dumps(box[0] if box else None))
    elif name == "progress":
        for step in (1, 2):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": step, "total": 2}})
        answer(request_id, "done")
    elif name == "flood":
        data = "y" * int(args.get("bytes", 1000))
        for _ in range(int(args.get("count", 1000))):
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": data}})
        answer(request_id, "flooded")
    elif name == "ask-then-cancel":
        send({"jsonrpc": "2.0", "id": "ask-2", "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}})
        time.sleep(0.2)
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "ask-2"}})
        answer(request_id, "cancelled")
    elif name == "announce":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "method": "notifications/custom", "params": {"x": 1}})
        answer(request_id, "announced")
    elif name == "cancels":
        answer(request_id, json.dumps(cancelled))
    elif name == "pid":
        answer(request_id, str(os.getpid()))
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "unknown tool"}})


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        if MODE == "crash-init":
            sys.exit(3)
        if MODE == "silent-init":
            continue
        version = message["params"]["protocolVersion"]
        send({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}}})
    elif method == "server/discover":
        if MODE == "stateless":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fake", "version": "1"}}})
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
    elif method == "notifications/cancelled":
        cancelled.append(message["params"]["requestId"])
    elif method == "tools/list":
        cursor = (message.get("params") or {}).get("cursor")
        page = {"tools": [{"name": "sleep", "inputSchema": {"type": "object"}}]} if cursor == "2" else {
            "tools": [{"name": "pid", "inputSchema": {"type": "object"}}], "nextCursor": "2"}
        send({"jsonrpc": "2.0", "id": message["id"], "result": page})
    elif method == "resources/list":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"resources": [{"uri": "fake://one", "name": "one"}]}})
    elif method == "resources/read":
        uri = message["params"]["uri"]
        if uri == "fake://one":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"contents": [{"uri": uri, "text": "one"}]}})
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32002, "message": "no such resource"}})
    elif method == "tools/call":
        threading.Thread(target=call_tool, args=(message,), daemon=True).start()
    elif method is None and "id" in message:
        entry = waiting.pop(message["id"], None)
        if entry:
            entry[1].append(message.get("result", message.get("error")))
            entry[0].set()
    elif "id" in message:
        send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
