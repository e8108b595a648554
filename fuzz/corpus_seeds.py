#!/usr/bin/env python3
"""Writes starting inputs for a fuzz target into its working corpus (fuzz/corpus/TARGET,
git-ignored): the JSON-RPC 2.0 specification's examples and the shared Ethereum corpus
(../shared/corpus/ethereum-execution-apis, beside the repository), in the shape the target
reads (a frame; a stream with the framing-choice and read-size bytes first; an HTTP request).

    python3 fuzz/corpus_seeds.py TARGET

Called by fuzz/campaign.sh before each run. Without ../shared it says so and writes the
specification's examples only.
"""

import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "corpus", "ethereum-execution-apis")

# The examples of the JSON-RPC 2.0 specification, section 7.
SPEC = [
    '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
    '{"jsonrpc": "2.0", "result": 19, "id": 1}',
    '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
    '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}',
    '{"jsonrpc": "2.0", "method": "foobar"}',
    '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
    '{"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": "1"}',
    '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
    '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
    '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]',
    "[]",
    "[1]",
    "[1,2,3]",
    '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},'
    '{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},'
    '{"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},'
    '{"foo": "boo"},'
    '{"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
    '{"jsonrpc": "2.0", "method": "get_data", "id": "9"}]',
    '[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},'
    '{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]',
    # The methods the fuzz routers know.
    '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1.50}',
    '{"jsonrpc":"2.0","method":"ping","id":"\\u00e9"}',
    '{"jsonrpc":"2.0","method":"later","params":[5],"id":-0}',
    '{"jsonrpc":"2.0","method":"fail","params":{"a":[1]},"id":18446744073709551616}',
    '{"jsonrpc":"2.0","method":"first","params":[{"x":1},2],"id":7}',
    '{"jsonrpc":"2.0","method":"tick","params":[1]}',
    '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}',
]


def shared_messages(limit_bytes):
    """Request and response lines of the shared corpus, up to `limit_bytes` each."""
    if not os.path.isdir(SHARED):
        print(f"fuzz/corpus_seeds.py: {SHARED} is missing; using the specification's examples only")
        return []
    found = []
    for root, _, files in sorted(os.walk(SHARED)):
        for name in sorted(files):
            if not name.endswith(".io"):
                continue
            with open(os.path.join(root, name), encoding="utf-8") as io_file:
                for line in io_file:
                    if line.startswith((">> ", "<< ")):
                        text = line[3:].strip()
                        if len(text.encode()) <= limit_bytes:
                            found.append(text)
    return found


def ndjson(messages):
    return "".join(m.replace("\n", " ") + "\n" for m in messages).encode()


def content_length(messages):
    out = b""
    for m in messages:
        body = m.encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def http(messages):
    out = b""
    for m in messages:
        body = m.encode()
        out += (
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)
        ) + body
    return out


def inputs_for(target, messages):
    """The target's inputs made from `messages` (each one message or batch)."""
    if target in ("parse", "differential", "router", "id_rewrite", "roundtrip"):
        return [m.encode() for m in messages]
    # Header bytes (see common/chunked.rs: the limit or choice, a count, that many + 1 read
    # sizes), then the stream.
    pairs = [messages[i : i + 3] for i in range(0, len(messages), 3)]
    if target == "frame_ndjson":
        return [b"\xff\x02\x05\x0b\x10" + ndjson(p) for p in pairs]
    if target == "frame_content_length":
        return [b"\xff\x02\x05\x0b\x10" + content_length(p) for p in pairs]
    if target == "peer":
        # Even choice bytes: NDJSON; odd: Content-Length; high bits: a large frame limit.
        return [b"\xfe\x01\x07\x10" + ndjson(p) for p in pairs] + [
            b"\xff\x01\x07\x10" + content_length(p) for p in pairs
        ]
    if target == "http":
        upgrade = (
            b"\x00\x00\x10GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            # A masked text frame holding `{"jsonrpc":"2.0","method":"ping","id":1}`.
            + bytes([0x81, 0x80 | 40, 1, 2, 3, 4])
            + bytes(b ^ (1, 2, 3, 4)[i % 4] for i, b in enumerate(b'{"jsonrpc":"2.0","method":"ping","id":1}'))
        )
        return [b"\x00\x00\x10" + http(p) for p in pairs] + [upgrade]
    return []


def main():
    target = sys.argv[1]
    directory = os.path.join(HERE, "corpus", target)
    os.makedirs(directory, exist_ok=True)
    messages = SPEC + shared_messages(16 << 10)
    written = 0
    for data in inputs_for(target, messages):
        name = "seed-" + hashlib.sha1(data).hexdigest()
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            with open(path, "wb") as seed:
                seed.write(data)
            written += 1
    print(f"fuzz/corpus_seeds.py: {written} new inputs in fuzz/corpus/{target}")


if __name__ == "__main__":
    main()
