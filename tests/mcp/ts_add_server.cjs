// The official MCP TypeScript SDK's server (npm @modelcontextprotocol/sdk 1.32.2) with one
// tool, `add {a, b}` → the sum as text, as the report's MCP section measures it beside
// rpcwire's and rmcp's: `ts_add_server.cjs stdio`, or `ts_add_server.cjs http` (Streamable
// HTTP at /mcp on 127.0.0.1, a port the system picks, stateful sessions; it prints
// `listening on 127.0.0.1:PORT`). It exits when its stdin closes. NODE_PATH names the
// installed node_modules.
"use strict";
const http = require("node:http");
const { randomUUID } = require("node:crypto");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { isInitializeRequest } = require("@modelcontextprotocol/sdk/types.js");
const { z } = require("zod");

function server() {
  const mcp = new McpServer({ name: "ts-add", version: "1.0.0" });
  mcp.registerTool(
    "add",
    { description: "Adds two integers", inputSchema: { a: z.number().int(), b: z.number().int() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  return mcp;
}

async function main() {
  const mode = process.argv[2];
  if (mode === "stdio") {
    await server().connect(new StdioServerTransport());
    return;
  }
  const transports = new Map();
  const httpServer = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const parsed = body ? JSON.parse(body) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id && transports.get(id);
    if (!transport) {
      if (req.method !== "POST" || !isInitializeRequest(parsed)) {
        res.writeHead(id ? 404 : 400).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => transports.set(sid, transport),
      });
      await server().connect(transport);
    }
    await transport.handleRequest(req, res, parsed);
  });
  httpServer.keepAliveTimeout = 60000;
  httpServer.listen(0, "127.0.0.1", () => {
    console.log(`listening on 127.0.0.1:${httpServer.address().port}`);
  });
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
