"""The official Python MCP SDK (``mcp``, github.com/modelcontextprotocol/python-sdk; nobody here
wrote it) drives ``forgestate mcp --store DIR`` over stdio with ``stdio_client`` and
``ClientSession``, in both of its connection eras: the ``initialize`` handshake (the SDK offers
its newest handshake version, 2025-11-25 in mcp 2.3.0, and the server takes it) and the
``server/discover`` probe of the per-request protocol (2026-07-28 in mcp 2.3.0; ``mcp.Client``
picks it by default). The SDK parses every answer with its own models and checks every tool
result it gets against the tool's output schema; its warnings and the server's stderr fail the
test.

Needs ``mcp`` (``.ci/run`` installs the version pinned in ``requirements-mcp.txt`` and fails if
these tests are skipped).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Mapping

import pytest

pytest.importorskip("mcp.client.stdio")

import anyio  # noqa: E402
import jsonschema  # noqa: E402
import mcp  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION  # noqa: E402

from forgestate import _run  # noqa: E402

#: How the session starts: the handshake, or the per-request era's probe.
ERAS = {"initialize": LATEST_HANDSHAKE_VERSION, "discover": LATEST_MODERN_VERSION}
#: A whole test's budget, and one request's: a server that stops answering fails, never hangs.
SESSION_BUDGET = 60
CALL_BUDGET = 10
#: JSON-RPC's invalid-params code.
INVALID_PARAMS = -32602
#: A resource that does not exist, per era: 2025-11-25's own code; 2026-07-28 retired it for
#: invalid params.
RESOURCE_NOT_FOUND = {"initialize": -32002, "discover": INVALID_PARAMS}

Body = Callable[[ClientSession], Awaitable[None]]


@pytest.fixture(params=sorted(ERAS))
def era(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def drive(tmp_path: Path, era: str, caplog: pytest.LogCaptureFixture) -> Callable[[Body], None]:
    """Runs ``body`` on a fresh ``forgestate mcp`` over a local store, the session started in
    ``era`` by the SDK; fails on a timeout, a warning the SDK logs, or a line on the server's
    stderr."""
    store = tmp_path / "mcp-store"
    errlog = tmp_path / "server-stderr.txt"

    def run(body: Body) -> None:
        async def main() -> None:
            params = StdioServerParameters(
                command=_run.find_binary(),
                args=["mcp", "--store", str(store)],
                env=dict(os.environ),
            )
            with errlog.open("w") as err, anyio.fail_after(SESSION_BUDGET):
                async with stdio_client(params, errlog=err) as (read, write):
                    session = ClientSession(read, write, read_timeout_seconds=CALL_BUDGET)
                    async with session:
                        if era == "initialize":
                            await session.initialize()
                        else:
                            await session.discover()
                        assert session.protocol_version == ERAS[era]
                        await body(session)

        with caplog.at_level(logging.WARNING, logger="mcp"):
            anyio.run(main)
        warned = [r.getMessage() for r in caplog.records if r.name.startswith("mcp")]
        assert warned == [], f"the SDK warned: {warned}"
        assert errlog.read_text() == "", f"forgestate mcp printed on stderr:\n{errlog.read_text()}"

    return run


def mcp_verbs() -> List[Mapping[str, Any]]:
    """The verbs of ``forgestate schema`` whose faces include mcp, in the table's order."""
    done = subprocess.run([_run.find_binary(), "schema"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, f"forgestate schema failed: {done.stderr}"
    verbs = [v for v in json.loads(done.stdout)["verbs"] if "mcp" in v["faces"]]
    assert {"checkpoint", "resume", "list"} <= {v["name"] for v in verbs}, verbs
    return verbs


async def call(
    session: ClientSession, name: str, args: Dict[str, Any]
) -> mcp.types.CallToolResult:
    """A tool call that must answer within a request's budget."""
    with anyio.fail_after(CALL_BUDGET):
        return await session.call_tool(name, args)


def answered(result: mcp.types.CallToolResult) -> Dict[str, Any]:
    """The structured answer of a call that succeeded; its last text block carries the same
    document for clients that read only text."""
    texts = [c.text for c in result.content if isinstance(c, mcp.types.TextContent)]
    assert not result.is_error, texts
    assert isinstance(result.structured_content, dict), result
    assert json.loads(texts[-1]) == result.structured_content
    return result.structured_content


def failed(result: mcp.types.CallToolResult) -> Dict[str, Any]:
    """The error document of a call that failed as a tool result: a readable first line, the
    shared error document next, and no structured content for the SDK to refuse."""
    texts = [c.text for c in result.content if isinstance(c, mcp.types.TextContent)]
    assert result.is_error is True, result
    assert result.structured_content is None, result
    assert len(texts) == 2 and texts[0], texts
    error = json.loads(texts[1])["error"]
    assert error["message"] == texts[0]
    return error


def test_the_sdk_connects_and_reads_what_the_server_offers(drive: Callable[[Body], None]) -> None:
    async def body(session: ClientSession) -> None:
        assert session.server_info is not None and session.server_info.name == "forgestate"
        caps = session.server_capabilities
        assert caps is not None
        assert caps.tools is not None and caps.resources is not None and caps.prompts is not None
        if session.initialize_result is not None:
            instructions = session.initialize_result.instructions or ""
            assert "`resume`" in instructions and "`checkpoint`" in instructions

    drive(body)


def test_every_tool_is_an_mcp_verb_with_schemas_the_sdk_accepts(
    drive: Callable[[Body], None],
) -> None:
    verbs = mcp_verbs()

    async def body(session: ClientSession) -> None:
        with anyio.fail_after(CALL_BUDGET):
            tools = (await session.list_tools()).tools
        assert [t.name for t in tools] == [v["name"] for v in verbs]
        for tool, verb in zip(tools, verbs):
            assert tool.title == verb["title"]
            assert tool.input_schema == verb["request"], tool.name
            assert tool.output_schema == verb["answer"], tool.name
            for schema in (tool.input_schema, tool.output_schema):
                assert schema is not None and schema.get("type") == "object", tool.name
                jsonschema.validators.validator_for(schema).check_schema(schema)
            hints = tool.annotations
            assert hints is not None, tool.name
            assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint,
                    hints.open_world_hint) == (verb["read_only"], verb["destructive"],
                                               verb["idempotent"], verb["open_world"]), tool.name

    drive(body)


def test_a_checkpoint_then_resume_pass_the_sdks_output_check(
    drive: Callable[[Body], None],
) -> None:
    data = {"issue": 7, "branch": "fix/login", "done": ["tests"]}

    async def body(session: ClientSession) -> None:
        with anyio.fail_after(CALL_BUDGET):
            tools = {t.name: t for t in (await session.list_tools()).tools}
        saved = answered(await call(session, "checkpoint", {
            "agent": "w", "session": "s", "phase": "p1", "data": data,
            "next": "write the fix", "blockers": ["CI is red"],
        }))
        assert saved["posted"] is True and saved["record"]["phase"] == "p1"
        resumed = answered(await call(session, "resume", {"agent": "w", "session": "s"}))
        assert resumed["fresh_start"] is False
        assert (resumed["phase"], resumed["data"]) == ("p1", data)
        assert (resumed["next"], resumed["blockers"]) == ("write the fix", ["CI is red"])
        assert resumed["record_id"] == saved["id"]
        # call_tool checked both answers against the listed output schemas; the same check
        # refuses an answer that lacks a field the schema requires, so it is not vacuous.
        schema = tools["resume"].output_schema
        assert schema is not None and "phase" in schema["required"]
        jsonschema.validate(resumed, schema)
        broken = mcp.types.CallToolResult(
            content=[], structured_content={k: v for k, v in resumed.items() if k != "phase"})
        with pytest.raises(RuntimeError, match="Invalid structured content"):
            await session.validate_tool_result("resume", broken)

    drive(body)


def test_an_integer_sent_as_a_string_is_read_as_the_integer(drive: Callable[[Body], None]) -> None:
    async def body(session: ClientSession) -> None:
        for phase in ("p1", "p2"):
            args = {"agent": "w", "session": "s", "phase": phase}
            answered(await call(session, "checkpoint", args))
        for limit in ("1", 1):
            listed = answered(await call(session, "list", {"limit": limit}))
            assert [r["phase"] for r in listed["records"]] == ["p2"], limit

    drive(body)


def test_bad_calls_get_answers_the_sdk_reads(drive: Callable[[Body], None]) -> None:
    async def body(session: ClientSession) -> None:
        # A required field missing: a tool result with isError, naming the field.
        error = failed(await call(session, "resume", {"agent": "w"}))
        assert (error["code"], error["category"]) == (64, "usage")
        assert "session" in error["message"]
        # An integer that is not one: the same kind of answer.
        error = failed(await call(session, "list", {"limit": "many"}))
        assert error["code"] == 64 and "limit" in error["message"], error
        # No such tool: a JSON-RPC error the SDK raises, naming the tool.
        with pytest.raises(MCPError) as raised:
            await call(session, "checkpiont", {"agent": "w", "session": "s", "phase": "p"})
        assert raised.value.error.code == INVALID_PARAMS
        assert '"checkpiont"' in raised.value.error.message
        assert '"checkpoint"' in raised.value.error.message
        # The session still answers after all that.
        resumed = answered(await call(session, "resume", {"agent": "w", "session": "s"}))
        assert resumed["fresh_start"] is True

    drive(body)


def test_the_resume_resource_and_the_prompt(drive: Callable[[Body], None], era: str) -> None:
    async def body(session: ClientSession) -> None:
        answered(await call(session, "checkpoint", {
            "agent": "w", "session": "my session", "phase": "p1", "data": {"k": 1}}))
        with anyio.fail_after(CALL_BUDGET):
            assert (await session.list_resources()).resources == []
            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["forgestate://resume/{agent}/{session}"]
            uri = "forgestate://resume/w/my%20session"
            contents = (await session.read_resource(uri)).contents
            assert len(contents) == 1 and str(contents[0].uri) == uri
            assert isinstance(contents[0], mcp.types.TextResourceContents)
            assert contents[0].mime_type == "application/json"
            doc = json.loads(contents[0].text)
            assert (doc["phase"], doc["data"]) == ("p1", {"k": 1})
            tools = {t.name: t for t in (await session.list_tools()).tools}
            jsonschema.validate(doc, tools["resume"].output_schema)
            with pytest.raises(MCPError, match="forgestate://resume/AGENT/SESSION") as raised:
                await session.read_resource("forgestate://nowhere")
            assert raised.value.error.code == RESOURCE_NOT_FOUND[era]

            prompts = (await session.list_prompts()).prompts
            assert [p.name for p in prompts] == ["resume-my-work"]
            assert [(a.name, a.required) for a in prompts[0].arguments or []] == [
                ("agent", True), ("session", True)]
            got = await session.get_prompt("resume-my-work", {"agent": "w", "session": "s"})
            assert len(got.messages) == 1 and got.messages[0].role == "user"
            content = got.messages[0].content
            assert isinstance(content, mcp.types.TextContent)
            assert 'agent "w"' in content.text and "`resume`" in content.text
            with pytest.raises(MCPError) as raised:
                await session.get_prompt("resume-my-work", {"agent": "w"})
            assert raised.value.error.code == INVALID_PARAMS
            assert "session" in raised.value.error.message

    drive(body)


def test_calls_sent_at_once_and_a_call_abandoned(drive: Callable[[Body], None]) -> None:
    async def body(session: ClientSession) -> None:
        results: Dict[int, mcp.types.CallToolResult] = {}

        async def save(i: int) -> None:
            args = {"agent": "w", "session": "s", "phase": f"p{i}", "data": {"i": i}}
            results[i] = await call(session, "checkpoint", args)

        async with anyio.create_task_group() as group:
            for i in range(12):
                group.start_soon(save, i)
        assert sorted(results) == list(range(12))
        for result in results.values():
            assert answered(result)["posted"] is True
        listed = answered(await call(session, "list", {"session": "s"}))
        assert sorted(r["data"]["i"] for r in listed["records"]) == list(range(12))
        # A call the client gives up on leaves the session answering the next one.
        with anyio.move_on_after(0.001):
            await session.call_tool("list", {"session": "s"})
        resumed = answered(await call(session, "resume", {"agent": "w", "session": "s"}))
        assert resumed["phase"] in {f"p{i}" for i in range(12)}
        # A state too big to keep: a tool error that says so, not a broken session.
        error = failed(await call(session, "checkpoint", {
            "agent": "w", "session": "s", "phase": "big", "data": {"blob": "x" * 2_000_000}}))
        assert "limit" in error["message"], error
        again = answered(await call(session, "resume", {"agent": "w", "session": "s"}))
        assert again["phase"] == resumed["phase"]

    drive(body)


def test_the_sdks_default_client_takes_the_newest_era(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``mcp.Client`` as an application writes it (mode "auto": the discover probe, the
    handshake only if the server does not answer it) lands in the per-request era."""
    params = StdioServerParameters(
        command=_run.find_binary(),
        args=["mcp", "--store", str(tmp_path / "mcp-store")],
        env=dict(os.environ),
    )

    async def main() -> None:
        with anyio.fail_after(SESSION_BUDGET):
            async with mcp.Client(params, read_timeout_seconds=CALL_BUDGET) as client:
                assert client.protocol_version == LATEST_MODERN_VERSION
                args = {"agent": "w", "session": "s", "phase": "p1", "data": {"k": 1}}
                assert answered(await client.call_tool("checkpoint", args))["posted"] is True
                resumed = answered(await client.call_tool("resume", {"agent": "w", "session": "s"}))
                assert (resumed["phase"], resumed["data"]) == ("p1", {"k": 1})

    with caplog.at_level(logging.WARNING, logger="mcp"):
        anyio.run(main)
    warned = [r.getMessage() for r in caplog.records if r.name.startswith("mcp")]
    assert warned == [], f"the SDK warned: {warned}"
