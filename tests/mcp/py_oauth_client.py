"""The official MCP Python SDK's client (PyPI `mcp` 2.3.0) against an OAuth-protected MCP
server over Streamable HTTP, authorizing with the SDK's own OAuth support
(`mcp.client.auth.OAuthClientProvider`, an httpx Auth): on the server's 401 it discovers the
protected resource and authorization server metadata, registers a client dynamically, sends
the authorization request (PKCE, `resource`, the challenged scope) and exchanges the code.
No person is involved: the redirect handler follows the authorization server's redirects
itself (keeping cookies, as a browser does) until one leads to the redirect URI, and the
callback handler hands the SDK the code, state and `iss` of that redirect.

The SDK's registration requests are recorded (not changed) for the report.

Usage: `py_oauth_client.py URL [TOOL]`: connects, lists the tools and, given TOOL, calls it
with {} and prints its text. The last line of stdout is one JSON report
{"checks": [[name, passed, detail], ...]}; the exit status is 0 when every check passed.
"""

import json
import os
import sys
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2 as httpx
import mcp.client.auth.oauth2 as sdk_oauth2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:33420/callback"

checks = []
registrations = []


def _recorded(build):
    """The SDK's registration request, as it builds it, recorded."""

    def registration_request(server_metadata, client_metadata, fallback_base):
        request = build(server_metadata, client_metadata, fallback_base)
        registrations.append(json.loads(request.content))
        return request

    return registration_request


# The flow looks the builder up in its module at the time it registers.
sdk_oauth2.create_client_registration_request = _recorded(sdk_oauth2.create_client_registration_request)


def check(name, passed, detail=""):
    checks.append([name, bool(passed), str(detail)[:500]])


def text_of(result):
    return "".join(item.text for item in result.content if getattr(item, "type", "") == "text")


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class HeadlessBrowser:
    """Follows the authorization server's redirects, keeping its cookies, until one leads to
    the redirect URI; the callback handler then returns what that redirect carried."""

    def __init__(self):
        self.authorization_urls = []
        self.hops = []
        self.callback = None

    async def redirect_handler(self, authorization_url):
        self.authorization_urls.append(authorization_url)
        self.callback = None
        url = authorization_url
        async with httpx.AsyncClient(follow_redirects=False, timeout=15) as browser:
            for _ in range(20):
                response = await browser.get(url)
                self.hops.append((response.status_code, str(response.url).split("?")[0]))
                location = response.headers.get("location")
                if response.status_code not in (301, 302, 303, 307, 308) or not location:
                    raise RuntimeError(
                        f"authorization stopped at {response.url} with {response.status_code}: {response.text[:300]}"
                    )
                location = urljoin(str(response.url), location)
                if location.startswith(REDIRECT_URI):
                    self.callback = location
                    return
                url = location
        raise RuntimeError("too many redirects during authorization")

    async def callback_handler(self):
        if self.callback is None:
            raise RuntimeError("no redirect to the redirect URI")
        query = parse_qs(urlparse(self.callback).query)
        if "error" in query:
            raise RuntimeError(f"authorization error: {query}")
        first = lambda key: query.get(key, [None])[0]  # noqa: E731
        return AuthorizationCodeResult(code=first("code"), state=first("state"), iss=first("iss"))


async def scenario(url, tool):
    storage = MemoryStorage()
    browser = HeadlessBrowser()
    metadata = OAuthClientMetadata(
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        client_name="py-oauth-test",
    )
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    async with httpx.AsyncClient(auth=auth, timeout=httpx.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=20) as client:
            check("connected", True, client.protocol_version)
            check("authorized once", len(browser.authorization_urls) == 1, browser.hops)
            check(
                "client registered",
                storage.client_info is not None and storage.client_info.client_id,
                (storage.client_info and storage.client_info.client_id, registrations),
            )
            token = storage.tokens
            check(
                "token obtained",
                token is not None and token.access_token,
                token and {"token_type": token.token_type, "scope": token.scope, "refresh": bool(token.refresh_token)},
            )
            if browser.authorization_urls:
                query = parse_qs(urlparse(browser.authorization_urls[0]).query)
                check(
                    "authorization request",
                    "resource" in query and query.get("code_challenge_method") == ["S256"],
                    {k: v for k, v in query.items() if k in ("resource", "scope", "code_challenge_method", "prompt")},
                )
            tools = await client.list_tools()
            names = sorted(t.name for t in tools.tools)
            print("tools: " + " ".join(names))
            check("tools listed", len(names) > 0 and (tool is None or tool in names), (len(names), names))
            if tool is not None:
                result = await client.call_tool(tool, {})
                text = text_of(result)
                print(text)
                check(f"call {tool}", not result.is_error and text, text)


async def main():
    url = sys.argv[1]
    tool = sys.argv[2] if len(sys.argv) > 2 else None
    try:
        with anyio.fail_after(60):
            await scenario(url, tool)
    except BaseException as error:  # noqa: BLE001 - reported as a failed check
        if isinstance(error, BaseExceptionGroup):
            while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
                error = error.exceptions[0]
        if isinstance(error, KeyboardInterrupt):
            raise
        check("no error", False, f"{type(error).__name__}: {error}")
    print(json.dumps({"checks": checks}))
    return all(c[1] for c in checks)


if __name__ == "__main__":
    sys.exit(0 if anyio.run(main) else 1)
