// The official MCP TypeScript SDK's client (npm @modelcontextprotocol/sdk 1.32.2) against
// @modelcontextprotocol/server-everything behind a gateway — its Streamable HTTP endpoint
// (`ts_everything.cjs http URL`) or a stdio command (`ts_everything.cjs stdio COMMAND
// ARGS...`, the SDK starts it): tools, progress, sampling and elicitation round trips,
// cancellation, resources and prompts. Prints one JSON report on its last line:
// {"checks": [[name, passed, detail], ...]}. NODE_PATH names the installed node_modules.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const checks = [];
const check = (name, passed, detail) => checks.push([name, Boolean(passed), JSON.stringify(detail ?? "").slice(0, 500)]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

async function main() {
  const [kind, target, ...args] = process.argv.slice(2);
  const transport =
    kind === "stdio" ? new StdioClientTransport({ command: target, args }) : new StreamableHTTPClientTransport(new URL(target));
  const client = new Client(
    { name: "ts-everything", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: false } } },
  );
  const asked = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params.messages[0].content.text);
    return { role: "assistant", content: { type: "text", text: "sampled by the test" }, model: "ts-test" };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///tmp", name: "tmp" }] }));
  await client.connect(transport);
  // Every message as it came off the wire: the SDK's stdio client drops some progress sent
  // in the same burst as the result from its callbacks (../shared/mcp/NOTES.md).
  const wire = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    wire.push(message);
    deliver(message, extra);
  };
  check("server", client.getServerVersion().name.includes("everything"), client.getServerVersion());

  const tools = (await client.listTools()).tools;
  const names = tools.map((t) => t.name);
  const wanted = ["echo", "get-sum", "trigger-long-running-operation", "trigger-sampling-request", "trigger-elicitation-request"];
  check("tools listed", wanted.every((n) => names.includes(n)), names);
  check("echo", text(await client.callTool({ name: "echo", arguments: { message: "hi" } })) === "Echo: hi");
  check("get-sum", text(await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } })).includes("is 5"));

  const progress = [];
  const long = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress) },
  );
  check("long-running result", text(long).includes("Steps: 3"), long);
  await sleep(100);
  const sent = wire.filter((m) => m.method === "notifications/progress").map((m) => m.params.progress);
  const ordered = progress.every((p, i) => i === 0 || p > progress[i - 1]) && progress.length > 0;
  check("progress", JSON.stringify(sent) === "[1,2,3]" && ordered, [sent, progress]);

  const sampled = await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "weather", maxTokens: 10 } });
  check("sampling round trip", asked.length === 1 && asked[0].includes("weather") && text(sampled).includes("sampled by the test"), [asked, sampled]);
  const elicited = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
  check("elicitation round trip", text(elicited).includes("declined"), elicited);
  const roots = await client.callTool({ name: "get-roots-list", arguments: {} });
  check("roots round trip", text(roots).includes("file:///tmp"), roots);

  // An aborted call returns at once, and the session goes on.
  const abort = new AbortController();
  const started = Date.now();
  const call = client
    .callTool({ name: "trigger-long-running-operation", arguments: { duration: 20, steps: 20 } }, undefined, { signal: abort.signal })
    .catch((e) => e);
  await sleep(300);
  abort.abort("test");
  const aborted = await call;
  check("aborted call returns", aborted instanceof Error && Date.now() - started < 5000, String(aborted));
  check("the session goes on", text(await client.callTool({ name: "echo", arguments: { message: "again" } })) === "Echo: again");

  const resources = (await client.listResources()).resources;
  check("resources listed", resources.length > 0, resources.length);
  const read = await client.readResource({ uri: resources[0].uri });
  check("resource read", read.contents.length > 0 && read.contents[0].uri === resources[0].uri, read.contents[0]);
  const prompts = (await client.listPrompts()).prompts;
  check("prompts listed", prompts.length > 0, prompts.map((p) => p.name));

  const sums = await Promise.all([...Array(50).keys()].map((n) => client.callTool({ name: "get-sum", arguments: { a: n, b: n } })));
  check("50 concurrent calls", sums.every((r, n) => text(r).includes(`is ${2 * n}`)), sums.length);

  await client.close();
  console.log(JSON.stringify({ checks }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
