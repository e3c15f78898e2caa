"""The web client's protocol and board code checked against the server's: the message
examples of docs/protocol.md (the ones tests/server/protocol/test_protocol.py decodes), the message
types and fields of server/protocol/messages.py, and the engine's winning lines and notation."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import web_helpers

from engine import format_cell, variant
from server import protocol as p
from server.errors import ProtocolError

DOC = web_helpers.ROOT / "docs" / "protocol.md"
VARIANTS = ("4x4x4", "3x3x3", "4x4")


def documented_examples() -> list[str]:
    """Every example message of the protocol document: its JSON blocks, as
    test_protocol.py reads them, one message a block (a long one may span lines)."""
    blocks = re.findall(r"```json\n(.*?)\n```", DOC.read_text(encoding="utf-8"), re.S)
    return [block for block in blocks if block.strip()]


def fields(union: Any) -> dict[str, list[str]]:
    return {c.__struct_config__.tag: list(c.__struct_fields__) for c in typing.get_args(union)}


def split_examples() -> tuple[list[dict[str, Any]], list[str]]:
    """The client examples (as objects) and the server examples (as text)."""
    client, server = [], []
    for text in documented_examples():
        try:
            p.decode_client_message(text)
            client.append(json.loads(text))
        except ProtocolError:
            p.decode_server_message(text)  # the server's own test checks every one decodes
            server.append(text)
    return client, server


async def module_results(tmp_path: Path, script: str, arg: Any) -> Any:
    """Run ``script`` (an async function of (modules, arg)) in a page of a real server, with
    the client's protocol and geometry modules imported."""
    async with web_helpers.browser() as chromium, \
            web_helpers.running_server(tmp_path / "q.db") as running:
        page = await web_helpers.Page.open(chromium, running.http_url + "/")
        base = await page.page.evaluate(
            "() => document.querySelector('script[type=module]').src.replace(/main\\.js$/, '')")
        result = await page.page.evaluate(
            "async ([base, arg]) => {"
            " const m = { protocol: await import(base + 'protocol.js'),"
            "   geometry: await import(base + 'geometry.js') };"
            f" return await ({script})(m, arg); }}", [base, arg])
        assert page.errors == []
        return result


async def test_the_client_speaks_the_documented_protocol(tmp_path: Path) -> None:
    client, server = split_examples()
    assert client and server
    script = """async (m, [client, server]) => ({
        client: m.protocol.CLIENT_FIELDS,
        server: m.protocol.SERVER_FIELDS,
        built: client.map(({t, ...rest}) => m.protocol.request(t, rest)),
        parsed: server.map((text) => m.protocol.parseServer(text)),
        refused: [m.protocol.parseServer('{"t": "welcome"}'),
                  m.protocol.parseServer('{"t": "from_the_future", "x": 1}'),
                  m.protocol.parseServer('not json')],
    })"""
    js = await module_results(tmp_path, script, [client, server])
    # What the client builds from each documented request is that request, field for field,
    # and every documented reply or event is one the client reads.
    assert js["built"] == client
    for text, parsed in zip(server, js["parsed"], strict=True):
        assert parsed == json.loads(text), text
    assert js["refused"] == [None, None, None]
    # The same message types and fields as server/protocol/messages.py.
    python_client = fields(p.ClientMessage)
    assert {t: [*f, "id"] for t, f in js["client"].items()} == {
        t: sorted(f, key=[*js["client"].get(t, []), "id"].index) for t, f in python_client.items()
    }
    python_server = fields(p.ServerMessage)
    assert set(python_server) <= set(js["server"]), "a server message the client ignores"
    for t, read in js["server"].items():
        if t in python_server:
            assert set(read) <= set(python_server[t]), t
        else:  # announced, not landed yet (the engine warm-up notice): nothing to check
            assert t == "engine", t
    documented = {json.loads(text)["t"] for text in server}
    assert set(python_server) <= documented


async def test_the_client_draws_the_engines_lines_and_notation(tmp_path: Path) -> None:
    script = """async (m, variants) => Object.fromEntries(variants.map((v) => {
        const g = m.geometry.geometryOf(v);
        const names = Array.from({length: g.size}, (_, c) => g.format(c));
        return [v, { lines: g.lines, names, parsed: names.map((n) => g.parse(n.toUpperCase())),
                     bad: ['', '5a1', 'z9', '1a1 x', 'a1a'].map((t) => g.parse(t)) }];
    }))"""
    js = await module_results(tmp_path, script, list(VARIANTS))
    for name in VARIANTS:
        g = variant(name)
        assert sorted(sorted(line) for line in js[name]["lines"]) == \
            sorted(sorted(line) for line in g.lines)
        assert js[name]["names"] == [format_cell(c, g) for c in range(g.size)]
        assert js[name]["parsed"] == list(range(g.size))
        assert js[name]["bad"] == [None] * 5
