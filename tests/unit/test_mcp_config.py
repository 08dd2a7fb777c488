"""`mcp.toml` read as the user wrote it, and which of its servers an agent is handed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.config_file import ConfigError
from cockpit.engine.mcp.config import McpEntry, parse_mcp
from cockpit.engine.mcp.handing import hand, handing_note

TEXT = """
[servers.files]
command = "files-mcp"
args = ["--root", "."]
env = { MODE = "${MODE}", FIXED = "yes" }

[servers."docs.v2"]
url = "https://docs.example.com/mcp"
headers = { Authorization = "Bearer ${KEY}" }
agents = ["claude"]
"""


def test_servers_are_read_as_written() -> None:
    parsed = parse_mcp(TEXT, "mcp.toml")
    assert parsed.warnings == ()
    assert parsed.value == (
        McpEntry(
            "files", "stdio", "files-mcp", ("--root", "."), (("MODE", "${MODE}"), ("FIXED", "yes"))
        ),
        McpEntry(
            "docs.v2",
            "http",
            url="https://docs.example.com/mcp",
            headers=(("Authorization", "Bearer ${KEY}"),),
            agents=("claude",),
        ),
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[servers.a\n", "mcp.toml:1: not valid TOML"),
        ('\n[servers.a]\nargs = ["x"]\n', "mcp.toml:2: [servers.a] needs a `command`"),
        ('[servers.a]\nurl = "ftp://x"\n', "mcp.toml:1: [servers.a] needs an http(s) `url`"),
        ('[servers.a]\ncommand = "x"\nagents = "claude"\n', "agents must be a list"),
        ('[servers.a]\ncommand = "x"\nenv = { A = 1 }\n', "env must be a table of text"),
        ('[servers.a]\nurl = "https://x"\ntransport = "ws"\n', "transport must be one of"),
        ('[servers."a b"]\ncommand = "x"\n', "a server's name is letters"),
        ("servers = 3\n", "`servers` must be tables"),
    ],
)
def test_a_server_that_cannot_be_read_says_where(text: str, said: str) -> None:
    with pytest.raises(ConfigError, match=None) as raised:
        parse_mcp(text, "mcp.toml")
    assert said in str(raised.value)


def test_an_unknown_field_is_a_warning_and_left_out() -> None:
    parsed = parse_mcp('[servers.a]\ncommand = "x"\ncolour = "red"\n', "mcp.toml")
    assert parsed.value == (McpEntry("a", "stdio", "x"),)
    assert parsed.warnings == ("mcp.toml:1: [servers.a] has unknown fields, left out: ['colour']",)


def test_an_agent_gets_what_it_can_take_with_its_variables_filled_in() -> None:
    entries = parse_mcp(TEXT, "mcp.toml").value
    handing = hand(entries, "claude", {"http": True}, {"MODE": "ro", "KEY": "k"})
    (files, docs) = handing.servers
    assert [(v.name, v.value) for v in files.env] == [("MODE", "ro"), ("FIXED", "yes")]
    assert [(h.name, h.value) for h in docs.headers] == [("Authorization", "Bearer k")]
    assert handing.left_out == []
    assert handing_note(handing) == "Your MCP servers handed to the agent: files, docs.v2."

    other = hand(entries, "gemini", {"http": True}, {"MODE": "ro", "KEY": "k"})
    assert [s.name for s in other.servers] == ["files"] and other.left_out == []
    unset = hand(entries, "claude", {}, {})
    assert unset.servers == []
    assert unset.left_out == [
        ("files", "MODE is not set where the agent starts"),
        ("docs.v2", "this agent takes no HTTP servers"),
    ]
    assert handing_note(hand((), "claude", {}, {})) is None


@given(st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True), st.text(max_size=20)))
def test_a_value_is_taken_from_the_environment_whole(variables: dict[str, str]) -> None:
    env = tuple((name, f"<${{{name}}}>") for name in variables)
    handing = hand((McpEntry("s", "stdio", "x", env=env),), "a", {}, variables)
    (server,) = handing.servers
    assert {v.name: v.value for v in server.env} == {
        name: f"<{value}>" for name, value in variables.items()
    }
