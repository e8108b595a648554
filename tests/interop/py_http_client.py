"""Calls rpcwire's HTTP server (examples/http_server.rs) with `requests`, as a Python program
would, and checks each answer. Run by tests/example_http_server.rs:

    python py_http_client.py URL MAX_BODY

Prints `http_client: checks=N` and exits 0 when every check holds; exits 1 naming the first
one that does not.
"""
import json
import sys

import requests

url, max_body = sys.argv[1], int(sys.argv[2])
session = requests.Session()  # keep-alive: one connection for the calls below
checks = 0


def check(what, condition, response):
    global checks
    if not condition:
        print(f"http_client: FAILED {what}: {response.status_code} {response.headers} {response.text!r}")
        sys.exit(1)
    checks += 1


def post(body, **kwargs):
    return session.post(url, data=body, timeout=10, **kwargs)


JSON = {"content-type": "application/json"}

r = session.post(url, json={"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}, timeout=10)
check("subtract", r.status_code == 200 and r.json() == {"jsonrpc": "2.0", "id": 1, "result": 19}, r)
check("content type", r.headers.get("content-type") == "application/json", r)

r = session.post(url, json={"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": "x"}, timeout=10)
check("named params", r.json() == {"jsonrpc": "2.0", "id": "x", "result": 19}, r)

batch = [
    {"jsonrpc": "2.0", "method": "sum", "params": [1, 2, 4], "id": "1"},
    {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
    {"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": "2"},
    {"foo": "boo"},
    {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
    {"jsonrpc": "2.0", "method": "get_data", "id": "9"},
]
r = session.post(url, json=batch, timeout=10)
answers = r.json()
check("batch length", r.status_code == 200 and len(answers) == 5, r)
check("batch sum", answers[0] == {"jsonrpc": "2.0", "id": "1", "result": 7}, r)
check("batch invalid", answers[2]["error"]["code"] == -32600 and answers[2]["id"] is None, r)
check("batch unknown", answers[3]["error"]["code"] == -32601, r)
check("batch get_data", answers[4]["result"] == ["hello", 5], r)

r = session.post(url, json=[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1, 2, 4]}], timeout=10)
check("notifications only: 204", r.status_code == 204 and r.content == b"", r)

r = post(b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', headers=JSON)
check("parse error", r.status_code == 200 and r.json()["error"]["code"] == -32700 and r.json()["id"] is None, r)

r = post("\u00e9".encode("latin-1"), headers=JSON)  # invalid UTF-8
check("invalid UTF-8", r.status_code == 200 and r.json()["error"]["code"] == -32700, r)

r = post(json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["x" * max_body], "id": 3}), headers=JSON)
check("body over the limit: 413", r.status_code == 413, r)

r = post(json.dumps({"jsonrpc": "2.0", "method": "echo", "params": ["ok"], "id": 4}), headers={"content-type": "text/plain"})
check("wrong content type: 415", r.status_code == 415, r)

r = session.get(url, timeout=10)
check("GET: 405", r.status_code == 405 and r.headers.get("allow") == "POST", r)

# A chunked body (no Content-Length) from a generator, over the limit.
def chunks():
    yield b'{"jsonrpc":"2.0","method":"echo","params":["'
    for _ in range(max_body // 64 + 2):
        yield b"y" * 64
    yield b'"],"id":5}'

r = requests.post(url, data=chunks(), headers=JSON, timeout=10)
check("chunked body over the limit: 413", r.status_code == 413, r)

r = session.post(url, json={"jsonrpc": "2.0", "method": "subtract", "params": [1, 1], "id": 6}, timeout=10)
check("still serving", r.json() == {"jsonrpc": "2.0", "id": 6, "result": 0}, r)

print(f"http_client: checks={checks}")
