"""Interop client: python-lsp-jsonrpc (pylsp_jsonrpc) calls a JSON-RPC server it spawns.

Usage: python py_client.py [--calls N] [--seed S] [--timeout SECONDS] -- <command> [args...]
(the `--` is optional when the command does not start with `-`).

The command (rpcwire's `spec_server --framing content-length` in tests/example_interop_pylsp.rs)
is run as a child; pylsp_jsonrpc's JsonRpcStreamWriter/JsonRpcStreamReader speak
Content-Length framing over its stdin/stdout and an Endpoint correlates the answers.
Checks: `subtract` (positional and named params, varied numbers, one round trip at a time
and pipelined, every answer compared), `sum`, `get_data`, `echo` of strings that ujson
escapes, notifications (no answer, and a request still works after them), unknown
methods (-32601), invalid params (-32602), that every answer matches a request and that
pylsp_jsonrpc logged no warning, and that the server exits 0 when its input closes.

Exit status 0 and one summary line `py_client: ok key=value ...` on stdout when every
check passes; otherwise `py_client: FAIL: ...` on stderr and exit status 1. Every wait has
a timeout, and a watchdog ends the run, so a hang is a failure.
"""

import argparse
import logging
import os
import random
import subprocess
import sys
import threading
from concurrent import futures

from pylsp_jsonrpc import exceptions
from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


class WarningRecorder(logging.Handler):
    """Records what pylsp_jsonrpc logs at WARNING or above: an unparseable message, a
    message without "jsonrpc": "2.0", an answer to an unknown id, a failed write."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(self.format(record))


class Client:
    def __init__(self, command, timeout):
        self.timeout = timeout
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.writer = JsonRpcStreamWriter(self.process.stdin)
        self.reader = JsonRpcStreamReader(self.process.stdout)
        # Ids alternate between numbers and strings (pylsp_jsonrpc's default is uuid4 strings).
        self.next_id = 0
        self.lock = threading.Lock()
        self.outstanding = set()  # ids of the requests sent and not yet answered
        self.futures = {}  # id -> future of the outstanding requests
        self.last_id = None
        self.requests = 0
        self.answers = 0
        self.unexpected = []  # messages that answer no pending request
        self.endpoint = Endpoint({}, self.writer.write, id_generator=self._id)
        self.reader_done = threading.Event()
        self.reader_thread = threading.Thread(target=self._listen, daemon=True)
        self.reader_thread.start()

    def _id(self):
        # Called by Endpoint.request before it sends: the id is outstanding from then on, so
        # an answer that comes back before request() returns is still recognised.
        with self.lock:
            self.next_id += 1
            n = self.next_id
            msg_id = n if n % 2 else f"req-{n}"
            self.outstanding.add(msg_id)
            self.last_id = msg_id
        return msg_id

    def _listen(self):
        try:
            self.reader.listen(self._consume)
        finally:
            self.reader_done.set()
            # The server's output ended: whatever is still pending will never be answered.
            with self.lock:
                pending = list(self.futures.values())
            for future in pending:
                if not future.done():
                    try:
                        future.set_exception(CheckFailed("the server's output ended before the answer"))
                    except futures.InvalidStateError:
                        pass

    def _consume(self, message):
        """Every message the server writes: it must answer an outstanding request, once."""
        with self.lock:
            self.answers += 1
            msg_id = message.get("id") if isinstance(message, dict) and "method" not in message else None
            if msg_id is None or msg_id not in self.outstanding:
                self.unexpected.append(message)
                return
            self.outstanding.discard(msg_id)
            self.futures.pop(msg_id, None)
        self.endpoint.consume(message)

    def request(self, method, params=None):
        """Sends a request (from the main thread only); returns pylsp_jsonrpc's future."""
        future = self.endpoint.request(method, params)
        with self.lock:
            self.requests += 1
            if self.last_id in self.outstanding:
                self.futures[self.last_id] = future
        if self.reader_done.is_set() and not future.done():
            try:
                future.set_exception(CheckFailed("the server's output had ended before the request"))
            except futures.InvalidStateError:
                pass
        return future

    def call(self, method, params=None):
        return self.wait(self.request(method, params), f"{method} {params!r}")

    def wait(self, future, what):
        try:
            return future.result(timeout=self.timeout)
        except futures.TimeoutError:
            raise CheckFailed(f"no answer to {what} within {self.timeout} s") from None

    def expect_error(self, method, params, code, exception_class):
        future = self.request(method, params)
        try:
            result = future.result(timeout=self.timeout)
        except futures.TimeoutError:
            raise CheckFailed(f"no answer to {method} {params!r} within {self.timeout} s") from None
        except exceptions.JsonRpcException as error:
            check(error.code == code, f"{method} {params!r}: error code {error.code}, expected {code}")
            check(
                isinstance(error, exception_class),
                f"{method} {params!r}: surfaced as {type(error).__name__}, expected {exception_class.__name__}",
            )
            check(isinstance(error.message, str) and error.message, f"{method} {params!r}: empty error message")
            return error
        raise CheckFailed(f"{method} {params!r}: expected error {code}, got result {result!r}")

    def notify(self, method, params=None):
        self.endpoint.notify(method, params)

    def close(self):
        """Closes the server's input; returns its exit status (it must end by itself)."""
        self.writer.close()
        try:
            status = self.process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"the server did not exit within {self.timeout} s of its input closing") from None
        check(self.reader_done.wait(self.timeout), "the server's output did not end")
        return status

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def subtract_cases(rng, calls):
    """(params, expected) pairs: positional and named, edges first, then random numbers whose
    difference fits in 64 bits (the server computes in i64)."""
    edges = [(0, 0), (42, 23), (23, 42), (-1, -1), (I64_MAX, 0), (I64_MIN, 0), (I64_MIN, -1), (-1, I64_MIN + 1)]
    pairs = edges[:calls]
    while len(pairs) < calls:
        scale = rng.choice([10, 1000, 2**31, 2**53, 2**62])
        pairs.append((rng.randint(-scale, scale), rng.randint(-scale, scale)))
    cases = []
    for i, (a, b) in enumerate(pairs):
        params = [a, b] if i % 2 == 0 else ({"minuend": a, "subtrahend": b} if i % 4 == 1 else {"subtrahend": b, "minuend": a})
        cases.append((params, a - b))
    return cases


def check_subtract(client, params, expected, result):
    check(
        type(result) is int and result == expected,
        f"subtract {params!r}: got {result!r}, expected {expected}",
    )


def run(client, calls, seed):
    counts = {}
    rng = random.Random(seed)

    # subtract: half one round trip at a time, half pipelined (all sent, then all awaited).
    cases = subtract_cases(rng, calls)
    half = len(cases) // 2
    for params, expected in cases[:half]:
        check_subtract(client, params, expected, client.call("subtract", params))
    in_flight = [(params, expected, client.request("subtract", params)) for params, expected in cases[half:]]
    for params, expected, future in in_flight:
        check_subtract(client, params, expected, client.wait(future, f"subtract {params!r}"))
    counts["subtract"] = len(cases)
    counts["subtract_pipelined"] = len(cases) - half

    # sum and get_data.
    numbers = [rng.randint(-(2**40), 2**40) for _ in range(100)]
    sums = [([1, 2, 4], 7), ([], 0), (numbers, sum(numbers))]
    for params, expected in sums:
        result = client.call("sum", params)
        check(type(result) is int and result == expected, f"sum {params!r}: got {result!r}, expected {expected}")
    counts["sum"] = len(sums)
    data = client.call("get_data")
    check(data == ["hello", 5], f"get_data: got {data!r}, expected ['hello', 5]")
    counts["get_data"] = 1

    # echo: strings that ujson writes escaped (\/, \uXXXX, surrogate pairs, controls),
    # read by rpcwire and written back as they came, then read by ujson again.
    echoes = [
        ["a/b/c", "tab\there", "quote\"backslash\\", "nul\u0000", "\u001f"],
        {"é": "naïve café", "emoji": "\U0001f600 \U0001f4a9", "cjk": "漢字", "rtl": "\u202e"},
        {"nested": [{"x": [1, -2.5, 1e300, True, False, None]}, [], {}]},
        ["x" * 10000],
    ]
    for params in echoes:
        result = client.call("echo", params)
        check(result == params, f"echo {params!r}: got {result!r}")
    counts["echo"] = len(echoes)

    # Notifications: never answered; the next request is, and nothing came in between
    # (the server answers in order, so an answer to a notification would arrive first).
    answers_before = client.answers
    notifications = [("update", [1, 2, 3, 4, 5]), ("foobar", None), ("notify_hello", [7]), ("notify_sum", [1, 2, 4])]
    for method, params in notifications:
        client.notify(method, params)
    check_subtract(client, [100, 58], 42, client.call("subtract", [100, 58]))
    check(
        client.answers == answers_before + 1,
        f"{client.answers - answers_before - 1} answer(s) to notifications: {client.unexpected!r}",
    )
    counts["notifications"] = len(notifications)

    # Unknown methods: pylsp_jsonrpc raises JsonRpcMethodNotFound from the error object.
    unknown = ["no_such_method", "foobar", "SUBTRACT"]
    for method in unknown:
        client.expect_error(method, [1, 2], -32601, exceptions.JsonRpcMethodNotFound)
    counts["method_not_found"] = len(unknown)

    # Invalid params: -32602, which pylsp_jsonrpc maps to JsonRpcInvalidParams.
    invalid = [
        ("subtract", [1]),
        ("subtract", [1, 2, 3]),
        ("subtract", ["1", 2]),
        ("subtract", [1.5, 2]),
        ("subtract", {"minuend": 1}),
        ("subtract", {"minuend": 1, "subtrahend": None}),
        ("subtract", [I64_MIN, 1]),  # the difference overflows i64
        ("sum", {"a": 1}),
        ("sum", [1, "two"]),
        ("get_data", [1]),
    ]
    for method, params in invalid:
        client.expect_error(method, params, -32602, exceptions.JsonRpcInvalidParams)
    counts["invalid_params"] = len(invalid)

    # Still serving after all the errors.
    check_subtract(client, {"minuend": 7, "subtrahend": 10}, -3, client.call("subtract", {"minuend": 7, "subtrahend": 10}))
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000, help="subtract calls (default 1000)")
    parser.add_argument("--seed", type=int, default=20240101, help="random seed for the numbers")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer")
    parser.add_argument("--watchdog", type=float, default=100.0, help="seconds before the whole run fails")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the server to spawn, with its args")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("the server command is missing")
    if args.calls < 2:
        parser.error("--calls must be at least 2")

    recorder = WarningRecorder()
    recorder.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    logging.getLogger("pylsp_jsonrpc").addHandler(recorder)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    try:
        client = Client(command, args.timeout)
    except OSError as error:
        print(f"py_client: FAIL: cannot start {command!r}: {error}", file=sys.stderr)
        return 1

    def watchdog():
        print(f"py_client: FAIL: the run took longer than {args.watchdog} s", file=sys.stderr)
        client.kill()
        os._exit(1)

    timer = threading.Timer(args.watchdog, watchdog)
    timer.daemon = True
    timer.start()
    try:
        counts = run(client, args.calls, args.seed)
        requests, answers = client.requests, client.answers
        status = client.close()
        check(status == 0, f"the server exited with status {status}")
        check(not client.unexpected, f"messages that answer no request: {client.unexpected[:5]!r}")
        check(answers == requests, f"{requests} requests, {answers} answers")
        check(not recorder.records, "pylsp_jsonrpc logged: " + "; ".join(recorder.records[:5]))
    except CheckFailed as failure:
        client.kill()
        print(f"py_client: FAIL: {failure}", file=sys.stderr)
        return 1
    finally:
        timer.cancel()
    fields = " ".join(f"{k}={v}" for k, v in counts.items())
    print(f"py_client: ok requests={requests} answers={answers} {fields} server_exit={status} seed={args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
