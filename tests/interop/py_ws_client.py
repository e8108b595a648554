"""Talks JSON-RPC to rpcwire's WebSocket endpoint (examples/http_server.rs) with the
`websockets` library. Run by tests/example_http_server.rs:

    python py_ws_client.py URL MAX_BODY

Prints `ws_client: checks=N` and exits 0 when every check holds; exits 1 naming the first
one that does not.
"""
import asyncio
import json
import sys

import websockets

url, max_body = sys.argv[1], int(sys.argv[2])
checks = 0


def check(what, condition, detail):
    global checks
    if not condition:
        print(f"ws_client: FAILED {what}: {detail!r}")
        sys.exit(1)
    checks += 1


async def main():
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}))
        answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
        check("subtract", answer == {"jsonrpc": "2.0", "id": 1, "result": 19}, answer)

        batch = [
            {"jsonrpc": "2.0", "method": "sum", "params": [1, 2, 4], "id": "1"},
            {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
            {"jsonrpc": "2.0", "method": "get_data", "id": "9"},
        ]
        await ws.send(json.dumps(batch))
        answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
        check("batch", [a.get("result") for a in answer] == [7, ["hello", 5]], answer)

        await ws.send("{nope")
        answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
        check("parse error", answer["error"]["code"] == -32700 and answer["id"] is None, answer)

        pong = await ws.ping(b"hi")
        await asyncio.wait_for(pong, 10)
        check("ping answered", True, None)

    # A message over the limit: the server closes with 1009.
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["x" * max_body], "id": 2}))
        try:
            await asyncio.wait_for(ws.recv(), 10)
            check("1009", False, "an answer instead of a close")
        except websockets.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
            check("1009", code == 1009, code)

    # A message of several times the limit, written whole before anything is read: the
    # server reads and drops the rest after its close, so the 1009 arrives, not a reset.
    async with websockets.connect(url, max_size=None) as ws:
        code = None
        try:
            await ws.send(json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["x" * (4 * max_body)], "id": 3}))
            await asyncio.wait_for(ws.recv(), 10)
        except websockets.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
        check("1009 after a message written whole", code == 1009, code)

    # A binary message: 1003.
    async with websockets.connect(url) as ws:
        await ws.send(b"\x01\x02")
        try:
            await asyncio.wait_for(ws.recv(), 10)
            check("1003", False, "an answer instead of a close")
        except websockets.ConnectionClosed as closed:
            code = closed.rcvd.code if closed.rcvd else None
            check("1003", code == 1003, code)


asyncio.run(main())
print(f"ws_client: checks={checks}")
