"""A repository's MCP servers as its `.cockpit.toml` writes them, the text the user approves,
and which of them an agent is handed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import McpServerState
from cockpit.engine.mcp.config import McpEntry
from cockpit.engine.mcp.repository import (
    NOT_APPROVED,
    approvable,
    hand_repository,
    server_text,
)
from cockpit.engine.worktrees.project import parse_project

PROJECT = """
test = "make test"

[mcp.servers.docs]
command = "docs-mcp"
args = ["--port", "0"]
colour = "blue"

[mcp.servers.web]
url = "https://example.com/mcp"
headers = { X-Team = "core" }
agents = ["claude"]
"""


def test_the_servers_of_a_project_file_are_read_with_the_rest() -> None:
    config = parse_project(PROJECT)
    assert config.test == "make test"
    assert config.mcp == (
        McpEntry("docs", "stdio", "docs-mcp", ("--port", "0")),
        McpEntry(
            "web", "http", url="https://example.com/mcp", headers=(("X-Team", "core"),),
            agents=("claude",),
        ),
    )  # fmt: skip
    assert config.problems == (
        ".cockpit.toml:4: [mcp.servers.docs] has unknown fields, left out: ['colour']",
    )


def test_a_server_that_cannot_be_read_leaves_the_rest_of_the_file_standing() -> None:
    config = parse_project('setup = "make"\n[mcp.servers.bad]\nurl = "ftp://x"\n[mcp.what]\n')
    assert (config.setup, config.mcp) == ("make", ())
    assert config.problems == (
        "`mcp.what` is not a setting Cockpit knows",
        "no MCP server is read: .cockpit.toml:2: [mcp.servers.bad] needs an http(s) `url`",
    )
    assert parse_project("mcp = 3\n").problems == ("`mcp` must be a table: [mcp.servers.NAME]",)


def test_the_text_approved_is_the_whole_server() -> None:
    docs = McpEntry("docs", "stdio", "docs-mcp", ("--x",), (("MODE", "a\x1b[2J"),))
    assert server_text(docs) == 'docs: command "docs-mcp" args ["--x"] env {"MODE": "a\\u001b[2J"}'
    web = McpEntry("web", "sse", url="https://e.com", agents=())
    assert server_text(web) == 'web: sse "https://e.com" agents []'


words = st.text(st.characters(codec="utf-8"), max_size=6)
entries = st.builds(
    McpEntry,
    name=st.sampled_from(["a", "b"]),
    transport=st.sampled_from(["stdio", "http", "sse"]),
    command=words,
    args=st.lists(words, max_size=3).map(tuple),
    env=st.dictionaries(words, words, max_size=2).map(lambda d: tuple(d.items())),
    url=words,
    headers=st.dictionaries(words, words, max_size=2).map(lambda d: tuple(d.items())),
    agents=st.none() | st.lists(words, max_size=2).map(tuple),
)


def _meaning(entry: McpEntry) -> tuple[object, ...]:
    """What a server runs or reaches, and for whom: two with the same meaning are one."""
    if entry.transport == "stdio":
        return (entry.name, entry.transport, entry.command, entry.args, entry.env, entry.agents)
    return (entry.name, entry.transport, entry.url, entry.headers, entry.agents)


@given(entries, entries)
def test_two_servers_that_differ_never_read_the_same(one: McpEntry, other: McpEntry) -> None:
    """An approval is kept by the text: approving one server must never approve another."""
    if _meaning(one) != _meaning(other):
        assert server_text(one) != server_text(other)


def test_only_approved_servers_that_name_no_variable_are_handed() -> None:
    listed = (
        McpEntry("docs", "stdio", "docs-mcp"),
        McpEntry("keyed", "stdio", "k", env=(("TOKEN", "${TOKEN}"),)),
        McpEntry("files", "stdio", "theirs"),
        McpEntry("web", "http", url="https://e.com"),
        McpEntry("events", "sse", url="https://e.com/sse"),
        McpEntry("gem", "stdio", "g", agents=("gemini",)),
    )
    yes = {server_text(listed[3]), server_text(listed[4])}
    handing, states = hand_repository(
        listed, "claude", {"http": True}, "/repo", yes.__contains__, {"files"}
    )
    assert [server.name for server in handing.servers] == ["web"]
    assert states == [
        McpServerState("docs", "stdio", False, NOT_APPROVED, "/repo", server_text(listed[0])),
        McpServerState(
            "keyed", "stdio", False,
            "a repository's server may not name your environment variables (${TOKEN})", "/repo",
        ),
        McpServerState(
            "files", "stdio", False, "one of your servers, or Cockpit's, has this name", "/repo"
        ),
        McpServerState("web", "http", True, "", "/repo"),
        McpServerState("events", "sse", False, "this agent takes no SSE servers", "/repo"),
    ]  # fmt: skip
    texts, refused = approvable(listed)
    assert len(texts) == 5 and refused == [
        "the MCP server keyed is never handed: a repository's server may not name your"
        " environment variables (${TOKEN})"
    ]
