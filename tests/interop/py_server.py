"""Interop server: python-lsp-jsonrpc (pylsp_jsonrpc) serving `subtract` on stdin/stdout.

Usage: python py_server.py

Content-Length framing (pylsp_jsonrpc's JsonRpcStreamReader/JsonRpcStreamWriter) over the
binary stdin/stdout; an Endpoint dispatches. One method, as in the JSON-RPC 2.0
specification: `subtract` with `[minuend, subtrahend]` or
`{"minuend": a, "subtrahend": b}` returns minuend - subtrahend; other params are -32602,
other methods -32601 (the Endpoint's own answer). Exits 0 when stdin closes. Run by
tests/example_interop_pylsp.rs as the server that rpcwire's `stdio_client` example calls.
"""

import logging
import sys

from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.exceptions import JsonRpcInvalidParams
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter


def is_integer(value):
    return isinstance(value, int) and not isinstance(value, bool)


def subtract(params):
    # Handlers get the params as sent (None when absent). pylsp_jsonrpc's MethodDispatcher
    # would call method(**params), which cannot take positional params, so this is a plain
    # function in a dict. A plain return value is answered at once, on the reader's thread.
    if isinstance(params, list) and len(params) == 2:
        minuend, subtrahend = params
    elif isinstance(params, dict) and set(params) == {"minuend", "subtrahend"}:
        minuend, subtrahend = params["minuend"], params["subtrahend"]
    else:
        raise JsonRpcInvalidParams("expected [minuend, subtrahend] or {\"minuend\": a, \"subtrahend\": b}")
    if not (is_integer(minuend) and is_integer(subtrahend)):
        raise JsonRpcInvalidParams("minuend and subtrahend must be integers")
    return minuend - subtrahend


def main():
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    reader = JsonRpcStreamReader(sys.stdin.buffer)
    writer = JsonRpcStreamWriter(sys.stdout.buffer)
    endpoint = Endpoint({"subtract": subtract}, writer.write, max_workers=1)
    reader.listen(endpoint.consume)  # returns at the end of stdin
    endpoint.shutdown()
    writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
