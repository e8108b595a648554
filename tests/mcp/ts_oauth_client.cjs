// The official MCP TypeScript SDK's client (npm @modelcontextprotocol/sdk 1.32.2) against an
// OAuth-protected MCP server over Streamable HTTP, authorizing with the SDK's own OAuth code:
// the transport's `authProvider` (an in-memory OAuthClientProvider), which on the server's 401
// discovers the protected resource metadata and the authorization server, registers
// dynamically and starts authorization code + PKCE with the `resource` parameter. The person's
// part is headless: redirectToAuthorization() follows the authorization server's redirects
// itself (keeping cookies per host, as a browser does) until one goes to the redirect URL,
// and takes its `code`; then transport.finishAuth(code) exchanges it and the client connects
// again, as the SDK's own examples do after UnauthorizedError.
//
// Usage: ts_oauth_client.cjs URL [TOOL] — connects to URL, lists the tools, and with TOOL calls
// it with {} and prints its text. NODE_PATH names the installed node_modules. The last line
// of stdout is one JSON report: {"checks": [[name, passed, detail], ...]}; every request the
// SDK made goes to stderr. Exits 0 when every check passed, 1 otherwise (or after 60 s).
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError } = require("@modelcontextprotocol/sdk/client/auth.js");

const REDIRECT_URL = "http://127.0.0.1:33419/callback";

const checks = [];
const check = (name, passed, detail, limit = 500) =>
  checks.push([name, Boolean(passed), JSON.stringify(detail ?? "").slice(0, limit)]);
const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const report = (code) => {
  console.log(JSON.stringify({ checks }));
  process.exit(code);
};
setTimeout(() => {
  check("finished in time", false, "60 s");
  report(1);
}, 60000);

// What the SDK sent, for stderr (the OAuth requests and the MCP ones).
const sdkFetch = async (url, init) => {
  const response = await fetch(url, init);
  console.error(`sdk: ${init?.method ?? "GET"} ${url} -> ${response.status}`);
  return response;
};

// Follows redirects from `start` as a browser would, keeping cookies per host, until a
// Location starts with the redirect URL; returns that URL.
async function browse(start) {
  const jars = new Map(); // host -> Map(name -> value)
  let url = new URL(start);
  for (let hop = 0; hop < 20; hop++) {
    const jar = jars.get(url.host) ?? new Map();
    jars.set(url.host, jar);
    const headers = jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } : {};
    const response = await fetch(url, { redirect: "manual", headers, signal: AbortSignal.timeout(10000) });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";")[0];
      const eq = pair.indexOf("=");
      if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    console.error(`browser: GET ${url.origin}${url.pathname} -> ${response.status}`);
    if (response.status < 300 || response.status >= 400 || !location) {
      const body = await response.text().catch(() => "");
      throw new Error(`authorization stopped at ${url} with ${response.status}: ${body.slice(0, 300)}`);
    }
    await response.body?.cancel();
    if (location.startsWith(REDIRECT_URL)) return new URL(location);
    url = new URL(location, url);
  }
  throw new Error("too many redirects");
}

class HeadlessProvider {
  constructor() {
    this.authorizationUrl = undefined;
    this.callback = undefined;
    this.code = undefined;
  }
  get redirectUrl() {
    return REDIRECT_URL;
  }
  get clientMetadata() {
    return {
      redirect_uris: [REDIRECT_URL],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      client_name: "ts-oauth-test",
    };
  }
  clientInformation() {
    return this._clientInformation;
  }
  saveClientInformation(information) {
    this._clientInformation = information;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  saveCodeVerifier(verifier) {
    this._codeVerifier = verifier;
  }
  codeVerifier() {
    if (!this._codeVerifier) throw new Error("no code verifier saved");
    return this._codeVerifier;
  }
  async redirectToAuthorization(url) {
    this.authorizationUrl = new URL(url);
    this.callback = await browse(url);
    this.code = this.callback.searchParams.get("code") ?? undefined;
  }
}

// The claims of a JWT, unverified (only to report what the authorization server issued).
function claims(token) {
  try {
    return JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
  } catch {
    return undefined;
  }
}

async function main() {
  const [target, tool] = process.argv.slice(2);
  const url = new URL(target);
  const provider = new HeadlessProvider();
  const client = new Client({ name: "ts-oauth-test", version: "1.0.0" }, { capabilities: {} });

  // First attempt: the server answers 401, the SDK runs discovery and registration and
  // "redirects" (our provider follows the redirects and keeps the code).
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: sdkFetch });
  let error;
  try {
    await client.connect(first);
  } catch (e) {
    error = e;
  }
  check("unauthorized at first", error instanceof UnauthorizedError, String(error));
  if (!(error instanceof UnauthorizedError) && error) console.error(error);
  const asked = provider.authorizationUrl ? Object.fromEntries(provider.authorizationUrl.searchParams) : {};
  delete asked.code_challenge;
  delete asked.state;
  check("registered", provider.clientInformation()?.client_id, provider.clientInformation());
  check("authorization asked", asked.resource && asked.code_challenge_method === "S256", asked);
  check("code received", provider.code, provider.callback && `${provider.callback.origin}${provider.callback.pathname}?${[...provider.callback.searchParams.keys()]}`);
  if (!provider.code) return 1;

  await first.finishAuth(provider.code);
  const tokens = provider.tokens();
  const jwt = claims(tokens?.access_token ?? "");
  check("token", tokens?.access_token, { token_type: tokens?.token_type, scope: tokens?.scope, refresh: Boolean(tokens?.refresh_token), aud: jwt?.aud, sub: jwt?.sub, jwt_scope: jwt?.scope });

  // Second attempt, with the token.
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider, fetch: sdkFetch });
  await client.connect(transport);
  check("connected", true, client.getServerVersion());

  const tools = (await client.listTools()).tools;
  const names = tools.map((t) => t.name);
  // Every name, untruncated: a test looks for its tool among them.
  check("listed", tools.length > 0 && (!tool || names.includes(tool)), names.join(" "), Infinity);

  if (tool) {
    const result = await client.callTool({ name: tool, arguments: {} });
    check("called", !result.isError, text(result));
    console.log(text(result));
  }
  await client.close();
  return 0;
}

main()
  .then(() => report(checks.every((c) => c[1]) ? 0 : 1))
  .catch((error) => {
    console.error(error);
    check("no error", false, String(error));
    report(1);
  });
