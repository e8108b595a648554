"""The official MCP Python SDK's client (PyPI `mcp` 2.3.0) against an MCP server: over stdio
(`py_client.py stdio COMMAND ARGS...`, the SDK starts the server) or Streamable HTTP
(`py_client.py http URL`). It calls the demo tools of examples/mcp_server and prints one
JSON report on its last line: {"checks": [[name, passed, detail], ...], "version": ...}.
"""

import json
import os
import sys
import time

import anyio
import httpx2 as httpx
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

checks = []


def check(name, passed, detail=""):
    checks.append([name, bool(passed), str(detail)[:500]])


async def sampling(context, params):
    text = params.messages[0].content.text
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"sampled: {text}"), model="py-test"
    )


def text_of(result):
    return "".join(item.text for item in result.content if getattr(item, "type", "") == "text")


async def scenario(target, mode):
    logs = []

    async def logging_callback(params):
        logs.append(params)

    async with Client(
        target,
        mode=mode,
        sampling_callback=sampling,
        logging_callback=logging_callback,
        # The stateless revision's opt-in to log messages, per request in _meta; the
        # handshake revisions use logging/setLevel instead (below).
        log_level="warning",
        read_timeout_seconds=20,
    ) as client:
        # The server enables every revision: the default mode picks the stateless one
        # (server/discover, no initialize), the legacy mode the newest with initialize. A
        # server without the stateless revision (MCP_AUTO_VERSION names what it agrees on
        # then) gets initialize after the probe in the default mode too.
        auto = os.environ.get("MCP_AUTO_VERSION", "2026-07-28")
        expected = (auto,) if mode == "auto" else ("2025-11-25", "2025-06-18")
        check("protocol version agreed", client.protocol_version in expected, (mode, client.protocol_version))
        tools = await client.list_tools()
        names = {tool.name for tool in tools.tools}
        check("tools listed", {"add", "sleep", "progress", "log", "sample", "stats"} <= names, sorted(names))
        add_schema = next(tool.input_schema for tool in tools.tools if tool.name == "add")
        check("add schema", add_schema.get("required") == ["a", "b"], add_schema)

        result = await client.call_tool("add", {"a": 5, "b": 3})
        check("add", text_of(result) == "8" and not result.is_error, result)

        bad = await client.call_tool("add", {"a": "five"})
        check("bad arguments are a failed call", bad.is_error, bad)

        progress = []

        async def on_progress(value, total, message):
            progress.append((value, total))

        result = await client.call_tool("progress", {"steps": 5}, progress_callback=on_progress)
        check("progress result", text_of(result) == "done 5", result)
        await anyio.sleep(0.2)
        check("progress notifications", [p[0] for p in progress] == [1, 2, 3, 4, 5] and all(p[1] == 5 for p in progress), progress)

        if client.protocol_version != "2026-07-28":
            await client.set_logging_level("warning")
        await client.call_tool("log", {"level": "info", "message": "quiet"})
        await client.call_tool("log", {"level": "error", "message": "loud"})
        await anyio.sleep(0.2)
        seen = [(str(p.level), p.logger, p.data) for p in logs]
        check("logging filtered by setLevel", len(logs) == 1 and logs[0].data == "loud" and logs[0].logger == "demo", seen)

        result = await client.call_tool("sample", {"prompt": "hi"})
        check("sampling round trip", text_of(result) == "sampled: hi", result)

        read = await client.read_resource("mem://hello")
        check("resource", read.contents[0].text == "hello", read)

        prompt = await client.get_prompt("greet", {"name": "Ada"})
        check("prompt", prompt.messages[0].content.text == "Hello, Ada!", prompt)

        # Cancellation: a call abandoned after 200 ms is cancelled on the server.
        before = json.loads(text_of(await client.call_tool("stats", {})))
        started = time.monotonic()
        with anyio.move_on_after(0.2):
            await client.call_tool("sleep", {"ms": 10000})
        check("abandoned call returns", time.monotonic() - started < 5, time.monotonic() - started)
        stats = {}
        for _ in range(50):
            stats = json.loads(text_of(await client.call_tool("stats", {})))
            if stats["sleep_cancelled"] > before["sleep_cancelled"]:
                break
            await anyio.sleep(0.05)
        cancelled = stats.get("sleep_cancelled", 0) == before["sleep_cancelled"] + 1
        check("cancelled on the server", cancelled and stats.get("sleep_completed") == before["sleep_completed"], (before, stats))

        # Many calls at once.
        answers = {}

        async def one(n):
            answers[n] = text_of(await client.call_tool("add", {"a": n, "b": n}))

        async with anyio.create_task_group() as group:
            for n in range(100):
                group.start_soon(one, n)
        check("100 concurrent calls", all(answers[n] == str(2 * n) for n in range(100)), len(answers))

        # Concurrent sleeps overlap (the server runs them at once).
        started = time.monotonic()
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(client.call_tool, "sleep", {"ms": 300})
        elapsed = time.monotonic() - started
        check("sleeps run concurrently", elapsed < 1.2, elapsed)
        return client.session


async def malformed_http(url):
    """Malformed JSON over HTTP: 400 with -32700, and the session goes on."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with httpx.AsyncClient() as http:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        response = await http.post(url, json=init, headers=headers)
        session = response.headers.get("mcp-session-id")
        headers["mcp-session-id"] = session
        bad = await http.post(url, content=b"{not json", headers=headers)
        body = bad.json()
        check("malformed JSON is 400 -32700", bad.status_code == 400 and body["error"]["code"] == -32700, (bad.status_code, body))
        ping = await http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers)
        check("the session goes on", ping.status_code == 200 and ping.json()["result"] == {}, ping.text)


async def main():
    kind = sys.argv[1]
    if kind == "stdio":
        target = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
    else:
        target = sys.argv[2]
    # The default mode probes server/discover first, then falls back to initialize.
    await scenario(target, "auto")
    await scenario(target, "legacy")
    if kind == "http":
        await malformed_http(target)
    print(json.dumps({"checks": checks}))


anyio.run(main)
