// The official MCP TypeScript SDK's client (npm @modelcontextprotocol/sdk 1.32.2) against an
// MCP server: over stdio (`ts_client.cjs stdio COMMAND ARGS...`, the SDK starts the server)
// or Streamable HTTP (`ts_client.cjs http URL`). It calls the demo tools of
// examples/mcp_server and prints one JSON report on its last line:
// {"checks": [[name, passed, detail], ...]}. NODE_PATH names the installed node_modules.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { CreateMessageRequestSchema, LoggingMessageNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");

const checks = [];
const check = (name, passed, detail) => checks.push([name, Boolean(passed), JSON.stringify(detail ?? "").slice(0, 500)]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

async function main() {
  const [kind, target, ...args] = process.argv.slice(2);
  const transport =
    kind === "stdio" ? new StdioClientTransport({ command: target, args }) : new StreamableHTTPClientTransport(new URL(target));
  const client = new Client({ name: "ts-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    role: "assistant",
    content: { type: "text", text: `sampled: ${request.params.messages[0].content.text}` },
    model: "ts-test",
  }));
  await client.connect(transport);
  // Every message as it came off the wire (the SDK's own callbacks may miss progress sent in
  // the same burst as the result over stdio: ../shared/mcp/NOTES.md).
  const wire = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    wire.push(message);
    deliver(message, extra);
  };
  check("protocol version agreed", client.getServerVersion().name === "rpcwire-mcp-server", client.getServerVersion());

  const tools = (await client.listTools()).tools;
  check("tools listed", ["add", "sleep", "progress", "log", "sample", "stats"].every((n) => tools.some((t) => t.name === n)), tools.length);
  const raw = tools.find((t) => t.name === "json_schema_2020_12_tool");
  check("raw schema kept", raw && raw.inputSchema.$schema === "https://json-schema.org/draft/2020-12/schema" && raw.inputSchema.additionalProperties === false, raw);

  check("add", text(await client.callTool({ name: "add", arguments: { a: 5, b: 3 } })) === "8");
  const bad = await client.callTool({ name: "add", arguments: { a: "five" } });
  check("bad arguments are a failed call", bad.isError === true, bad);

  const progress = [];
  const done = await client.callTool({ name: "progress", arguments: { steps: 4 } }, undefined, {
    onprogress: (p) => progress.push([p.progress, p.total]),
  });
  check("progress result", text(done) === "done 4", done);
  await sleep(100);
  const sent = wire.filter((m) => m.method === "notifications/progress").map((m) => [m.params.progress, m.params.total]);
  check("progress notifications on the wire", JSON.stringify(sent) === JSON.stringify([[1, 4], [2, 4], [3, 4], [4, 4]]), sent);
  const inOrder = progress.every((p, i) => i === 0 || p[0] > progress[i - 1][0]);
  check("progress callbacks in order", inOrder && progress.every((p) => p[1] === 4), progress);

  await client.setLoggingLevel("warning");
  await client.callTool({ name: "log", arguments: { level: "info", message: "quiet" } });
  await client.callTool({ name: "log", arguments: { level: "error", message: "loud" } });
  await sleep(200);
  check("logging filtered by setLevel", logs.length === 1 && logs[0].data === "loud" && logs[0].logger === "demo", logs);

  check("sampling round trip", text(await client.callTool({ name: "sample", arguments: { prompt: "hi" } })) === "sampled: hi");
  const read = await client.readResource({ uri: "mem://hello" });
  check("resource", read.contents[0].text === "hello", read);
  const prompt = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
  check("prompt", prompt.messages[0].content.text === "Hello, Ada!", prompt);

  // Cancellation: an aborted call is cancelled on the server.
  const before = JSON.parse(text(await client.callTool({ name: "stats", arguments: {} })));
  const abort = new AbortController();
  const started = Date.now();
  const call = client.callTool({ name: "sleep", arguments: { ms: 10000 } }, undefined, { signal: abort.signal }).catch((e) => e);
  await sleep(200);
  abort.abort("test");
  const aborted = await call;
  check("aborted call returns", aborted instanceof Error && Date.now() - started < 5000, String(aborted));
  let stats = before;
  for (let i = 0; i < 50 && stats.sleep_cancelled === before.sleep_cancelled; i++) {
    await sleep(50);
    stats = JSON.parse(text(await client.callTool({ name: "stats", arguments: {} })));
  }
  check(
    "cancelled on the server",
    stats.sleep_cancelled === before.sleep_cancelled + 1 && stats.sleep_completed === before.sleep_completed,
    [before, stats],
  );

  const sums = await Promise.all([...Array(100).keys()].map((n) => client.callTool({ name: "add", arguments: { a: n, b: n } })));
  check("100 concurrent calls", sums.every((r, n) => text(r) === String(2 * n)), sums.length);

  const t0 = Date.now();
  await Promise.all([...Array(5).keys()].map(() => client.callTool({ name: "sleep", arguments: { ms: 300 } })));
  check("sleeps run concurrently", Date.now() - t0 < 1200, Date.now() - t0);

  await client.close();
  console.log(JSON.stringify({ checks }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
