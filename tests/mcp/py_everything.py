"""The official MCP Python SDK's client (PyPI `mcp` 2.3.0) against
@modelcontextprotocol/server-everything behind a Streamable HTTP endpoint
(`py_everything.py URL`, rpcwire's gateway in front of the server over stdio): tools,
progress, sampling, elicitation and roots round trips, an abandoned call, resources and
prompts. Prints one JSON report on its last line: {"checks": [[name, passed, detail], ...]}.
"""

import json
import sys
import time

import anyio
import mcp_types as types
from mcp import Client

checks = []
asked = []


def check(name, passed, detail=""):
    checks.append([name, bool(passed), str(detail)[:500]])


def text_of(result):
    return "".join(item.text for item in result.content if getattr(item, "type", "") == "text")


async def sampling(context, params):
    asked.append(params.messages[0].content.text)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="sampled by python"), model="py-test"
    )


async def elicitation(context, params):
    return types.ElicitResult(action="decline")


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv", name="srv")])


async def main():
    url = sys.argv[1]
    async with Client(
        url,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
        read_timeout_seconds=20,
    ) as client:
        check("revision", client.protocol_version == "2025-11-25", client.protocol_version)
        names = {tool.name for tool in (await client.list_tools()).tools}
        wanted = {"echo", "get-sum", "trigger-long-running-operation", "trigger-sampling-request", "trigger-elicitation-request"}
        check("tools listed", wanted <= names, sorted(names))
        check("echo", text_of(await client.call_tool("echo", {"message": "hi"})) == "Echo: hi")
        check("get-sum", "is 5" in text_of(await client.call_tool("get-sum", {"a": 2, "b": 3})))

        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        done = await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3}, progress_callback=on_progress)
        await anyio.sleep(0.1)
        check("progress", "Steps: 3" in text_of(done) and progress == [1, 2, 3], (progress, done))

        sampled = await client.call_tool("trigger-sampling-request", {"prompt": "weather", "maxTokens": 10})
        check("sampling round trip", asked and "weather" in asked[0] and "sampled by python" in text_of(sampled), (asked, sampled))
        elicited = await client.call_tool("trigger-elicitation-request", {})
        check("elicitation round trip", "declined" in text_of(elicited), elicited)
        listed_roots = await client.call_tool("get-roots-list", {})
        check("roots round trip", "file:///srv" in text_of(listed_roots), listed_roots)

        started = time.monotonic()
        with anyio.move_on_after(0.3):
            await client.call_tool("trigger-long-running-operation", {"duration": 20, "steps": 20})
        check("abandoned call returns", time.monotonic() - started < 5, time.monotonic() - started)
        check("the session goes on", text_of(await client.call_tool("echo", {"message": "again"})) == "Echo: again")

        resources = (await client.list_resources()).resources
        check("resources listed", len(resources) > 0, len(resources))
        read = await client.read_resource(resources[0].uri)
        check("resource read", len(read.contents) > 0 and str(read.contents[0].uri) == str(resources[0].uri), read.contents[0])
        prompts = (await client.list_prompts()).prompts
        check("prompts listed", len(prompts) > 0, [p.name for p in prompts])
    print(json.dumps({"checks": checks}))


anyio.run(main)
