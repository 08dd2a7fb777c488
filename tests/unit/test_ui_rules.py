"""The pure rules in the UI modules: slash commands (`cockpit.ui.slash`), engine events as
messages (`cockpit.ui.engine_messages`), attention escape sequences (`cockpit.ui.alert_sequences`)
and permission prompt texts (`cockpit.ui.permission_prompt`)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.content import Content
from textual.message import Message
from textual.widgets import Button

from cockpit.api import (
    AttentionEvent,
    EngineEvent,
    FramesEvent,
    LinkEvent,
    PermissionEvent,
    PermissionOption,
    PermissionRequest,
    ProblemEvent,
    ResyncEvent,
    SavingEvent,
    SessionEvent,
    StatusEvent,
    read_permission_option,
    read_tool_call,
)
from cockpit.text.textout import command_of
from cockpit.ui.alert_sequences import (
    BEL,
    ESC,
    notification,
    title_for,
    tmux_wrap,
    window_title,
)
from cockpit.ui.cards import card_line, card_opens, exit_code, has_terminal, short_path
from cockpit.ui.engine_messages import (
    ENGINE_MESSAGES,
    EngineListener,
    FramesReady,
    StatusChanged,
    engine_message,
)
from cockpit.ui.permission_prompt import (
    KEYS,
    option_label,
    request_summary,
    variant_of,
)
from cockpit.ui.rail import CURRENT_MARK, RailEntry, entry_text, rail_title
from cockpit.ui.session_states import GLYPHS
from cockpit.ui.slash import (
    COCKPIT_COMMANDS,
    COCKPIT_NAMED,
    SlashCommand,
    completions,
    for_agent,
    matching,
    parse_slash,
)
from store import Frame

# Untrusted text as an agent might send it: escape sequences, C0 and C1 controls,
# separators of the OSC strings, and ordinary text.
HOSTILE = st.lists(
    st.one_of(
        st.sampled_from(
            [ESC, BEL, "\x9c", "\x9d", "\x9b", "\x90", "\r", "\n", "\t", "\0", ";", "\\", "]"]
        ),
        st.sampled_from(["P", "tmux;", "777", "9", "notify", "[31m", "]0;", "x", " "]),
        st.characters(codec="utf-8"),
    ),
    max_size=40,
).map("".join)
OSC_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
"""What must not appear inside an OSC string (a tab is harmless)."""


# -- slash commands -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/help", ("help", "")),
        ("/new claude", ("new", "claude")),
        ("  /rename   My   title  \n", ("rename", "My   title")),
        ("/export ~/notes.md", ("export", "~/notes.md")),
        ("/policy execute allow", ("policy", "execute allow")),
        ("/agent-command arg", ("agent-command", "arg")),
        ("hello", None),
        ("", None),
        ("   ", None),
        ("/", None),
        ("/ help", None),
        ("//help", None),  # a doubled slash is not a command
        ("x /help", None),
        ("@file /help", None),
    ],
)
def test_parse_slash(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_slash(text) == expected


NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_0123456789", min_size=1, max_size=12)


@given(NAMES, st.text(max_size=30), st.sampled_from(["", " ", "  \n"]))
def test_parse_slash_splits_name_and_arguments(name: str, arguments: str, pad: str) -> None:
    assert parse_slash(f"{pad}/{name} {arguments}{pad}") == (name, arguments.strip())
    assert parse_slash(f"/{name}") == (name, "")


@given(st.text(max_size=30))
def test_parse_slash_only_reads_slash_lines(text: str) -> None:
    parsed = parse_slash(text)
    stripped = text.strip()
    is_command = (
        stripped.startswith("/")
        and not stripped.startswith("//")
        and stripped[1:2] not in ("", " ")
    )
    assert (parsed is not None) == is_command
    if parsed is not None:
        name, arguments = parsed
        assert name and " " not in name
        assert stripped.startswith(f"/{name}")
        assert arguments == arguments.strip()
        assert stripped.endswith(arguments)


@pytest.mark.parametrize(
    ("typed", "sent"),
    [
        ("//help", "/help"),
        ("//help me out", "/help me out"),
        ("  //compress now", "/compress now"),
        ("/help", "/help"),
        ("hello //help", "hello //help"),
        ("//", "//"),
        ("// a comment", "// a comment"),
        ("///help", "///help"),
        ("", ""),
    ],
)
def test_a_doubled_slash_sends_the_agents_command(typed: str, sent: str) -> None:
    assert for_agent(typed) == sent


@given(NAMES, st.text(max_size=20))
def test_a_doubled_slash_is_never_cockpits_and_reaches_the_agent_as_one(
    name: str, rest: str
) -> None:
    typed = f"//{name} {rest}"
    assert parse_slash(typed) is None
    assert for_agent(typed) == typed[1:]
    assert parse_slash(for_agent(typed)) == (name, rest.strip())


def agent_commands(*names: str) -> list[SlashCommand]:
    return [SlashCommand(name, f"the agent's {name}", cockpit=False) for name in names]


def test_completion_offers_an_agent_command_cockpit_shares_as_doubled() -> None:
    agent = agent_commands("help", "stats", "model")
    typed = [(shown, c.cockpit) for shown, c in completions(agent, "")]
    assert ("/help", True) in typed and ("//help", False) in typed
    assert ("/model", True) in typed and ("//model", False) in typed
    assert ("/stats", False) in typed and ("//stats", False) not in typed
    # Each twin right after Cockpit's, so that "/help" typed out still means Cockpit's.
    assert typed.index(("//help", False)) == typed.index(("/help", True)) + 1
    assert [shown for shown, _ in completions(agent, "hel")] == ["/help", "//help"]
    assert [shown for shown, _ in completions(agent, "/")] == ["//help", "//stats", "//model"]
    assert [shown for shown, _ in completions(agent, "/st")] == ["//stats"]
    assert all(not c.cockpit for _, c in completions(agent, "/"))


@given(st.lists(NAMES, unique=True, max_size=6), st.text(alphabet="abcdehlmopt/", max_size=4))
def test_completion_hides_no_command(names: list[str], query: str) -> None:
    """Every command that matches is offered, and each offer, sent, reaches its owner:
    Cockpit's run by Cockpit, the agent's sent to the agent as its own `/name`."""
    agent = agent_commands(*names)
    offered = completions(agent, query)
    bare = query.removeprefix("/")
    wanted = agent if query.startswith("/") else [*agent, *COCKPIT_COMMANDS]
    assert sorted((c.name, c.cockpit) for _, c in offered) == sorted(
        (c.name, c.cockpit) for c in matching(wanted, bare)
    )
    for shown, command in offered:
        runs_in_cockpit = parse_slash(shown) is not None and shown[1:] in COCKPIT_NAMED
        assert runs_in_cockpit == command.cockpit
        if not command.cockpit:
            assert for_agent(shown) == f"/{command.name}"


@pytest.mark.parametrize("separator", ["\t", "\n"])
def test_a_command_name_ends_at_any_whitespace(separator: str) -> None:
    assert parse_slash(f"/export{separator}notes.md") == ("export", "notes.md")


def test_cockpit_commands() -> None:
    names = [command.name for command in COCKPIT_COMMANDS]
    assert len(set(names)) == len(names)
    assert {"new", "rename", "export", "theme", "help"} <= set(names)
    for command in COCKPIT_COMMANDS:
        assert command.cockpit
        assert command.description
        assert re.fullmatch(r"[a-z]+", command.name)
        assert parse_slash(f"/{command.name}") == (command.name, "")
        assert matching(list(COCKPIT_COMMANDS), command.name)[0] == command
    assert SlashCommand("x", "y").cockpit  # Cockpit's own unless said otherwise


def command(name: str, cockpit: bool = True) -> SlashCommand:
    return SlashCommand(name, f"does {name}", cockpit=cockpit)


def test_matching_puts_prefixes_before_substrings() -> None:
    commands = [command("compact"), command("new"), command("renew"), command("News", False)]
    assert [c.name for c in matching(commands, "new")] == ["new", "News", "renew"]
    assert [c.name for c in matching(commands, "NEW")] == ["new", "News", "renew"]
    assert matching(commands, "") == commands
    assert matching(commands, "zzz") == []


def test_matching_keeps_an_agent_command_that_shares_a_cockpit_name() -> None:
    ours, theirs = command("help"), command("help", cockpit=False)
    assert matching([theirs, ours], "he") == [theirs, ours]


@given(
    st.lists(st.text(alphabet="abcAB", min_size=1, max_size=5), max_size=8, unique=True),
    st.text("abB", max_size=3),
)
def test_matching_properties(names: list[str], query: str) -> None:
    commands = [command(name) for name in names]
    found = matching(commands, query)
    low = query.lower()
    assert sorted(found, key=commands.index) == [c for c in commands if low in c.name.lower()]
    prefixed = [c.name.lower().startswith(low) for c in found]
    assert prefixed == sorted(prefixed, reverse=True)  # every prefix match comes first
    starts = [c for c in found if c.name.lower().startswith(low)]
    assert starts == [c for c in commands if c.name.lower().startswith(low)]  # in given order


def test_every_cockpit_command_runs_from_the_table_it_is_completed_from() -> None:
    """The composer offers Cockpit's commands from `COCKPIT_COMMANDS` and the app runs them
    from it: each has a way to run and is found by its name; the agent's have none."""
    for command in COCKPIT_COMMANDS:
        assert command.run is not None
        assert COCKPIT_NAMED[command.name] is command
    assert set(COCKPIT_NAMED) == {command.name for command in COCKPIT_COMMANDS}
    assert SlashCommand("x", "y", cockpit=False).run is None


# -- engine events as messages ------------------------------------------------------------------


def frame(session: str, part: str) -> Frame:
    return Frame(session, "agent:1", 1, "agent", 1, part, True, len(part))


def one_of_each_event() -> list[EngineEvent]:
    request = PermissionRequest("r1", "s", {"title": "Edit"}, (), created=0.0)
    return [
        FramesEvent("s", (frame("s", "hi"),)),
        StatusEvent("s", "ready"),
        PermissionEvent(request, resolved=False),
        SessionEvent("s"),
        AttentionEvent("s", unread=True),
        ProblemEvent(None, "the disk is full"),
        SavingEvent(None),
        ResyncEvent("attached again"),
        LinkEvent("the Cockpit service is out of reach"),
    ]


def test_each_engine_event_type_has_a_message_of_its_own() -> None:
    """Every type but frames, which the listener holds behind one `FramesReady`."""
    events = [e for e in one_of_each_event() if not isinstance(e, FramesEvent)]
    assert set(ENGINE_MESSAGES) | {FramesEvent} == set(get_args(EngineEvent))
    assert set(ENGINE_MESSAGES) == {type(e) for e in events}
    messages = [engine_message(event) for event in events]
    assert len({type(message) for message in messages}) == len(events)
    assert all(message.event is event for message, event in zip(messages, events, strict=True))  # type: ignore[attr-defined]


def test_the_listener_holds_frames_behind_one_message_and_posts_the_rest() -> None:
    """However many frame events come, one `FramesReady` waits in the queue until the app
    takes them (per session, in order); every other event is posted as its message."""
    posted: list[Message] = []
    listener = EngineListener(posted.append)
    first, second, third = frame("a", "1"), frame("b", "2"), frame("a", "3")
    listener(FramesEvent("a", (first,)))
    listener(StatusEvent("a", "working"))
    listener(FramesEvent("b", (second,)))
    listener(FramesEvent("a", (third,)))
    assert [type(message) for message in posted] == [FramesReady, StatusChanged]
    assert listener.take() == {"a": [first, third], "b": [second]}
    assert listener.take() == {}
    listener(FramesEvent("a", (first,)))
    assert [type(message) for message in posted] == [FramesReady, StatusChanged, FramesReady]


# -- attention ----------------------------------------------------------------------------------


def test_notification_sends_osc_9_and_osc_777() -> None:
    assert notification("Fix the bug", "needs you", in_tmux=False) == (
        f"{ESC}]9;Fix the bug: needs you{BEL}{ESC}]777;notify;Fix the bug;needs you{BEL}"
    )


def test_notification_inside_tmux_is_wrapped_for_passthrough() -> None:
    assert notification("T", "b", in_tmux=True) == (
        f"{ESC}Ptmux;{ESC}{ESC}]9;T: b{BEL}{ESC}\\{ESC}Ptmux;{ESC}{ESC}]777;notify;T;b{BEL}{ESC}\\"
    )


def test_tmux_wrap_doubles_every_escape() -> None:
    assert tmux_wrap(f"{ESC}]2;x{BEL}") == f"{ESC}Ptmux;{ESC}{ESC}]2;x{BEL}{ESC}\\"
    assert tmux_wrap(f"{ESC}[1m{ESC}[0m") == f"{ESC}Ptmux;{ESC}{ESC}[1m{ESC}{ESC}[0m{ESC}\\"


def test_notification_text_loses_controls_and_separators() -> None:
    sent = notification("a;b\nc\x1b]0;evil\x07d", "x\x9cy;z", in_tmux=False)
    assert sent == f"{ESC}]9;a,b cd: xy,z{BEL}{ESC}]777;notify;a,b cd;xy,z{BEL}"


def test_notification_and_title_text_is_bounded() -> None:
    sent = notification("t" * 500, "b" * 500, in_tmux=False)
    assert (
        sent
        == f"{ESC}]9;{'t' * 200}: {'b' * 200}{BEL}{ESC}]777;notify;{'t' * 200};{'b' * 200}{BEL}"
    )
    assert window_title("w" * 500) == f"{ESC}]2;{'w' * 80}{BEL}"


PLAIN_NOTIFICATION = re.compile(
    r"\x1b\]9;([^\x07\x1b]*)\x07\x1b\]777;notify;([^;\x07\x1b]*);([^;\x07\x1b]*)\x07"
)


@given(HOSTILE, HOSTILE)
def test_untrusted_text_cannot_break_out_of_a_notification(title: str, body: str) -> None:
    sent = notification(title, body, in_tmux=False)
    found = PLAIN_NOTIFICATION.fullmatch(sent)
    assert found is not None, repr(sent)
    osc9, osc777_title, osc777_body = found.groups()
    for payload in (osc9, osc777_title, osc777_body):
        assert not OSC_UNSAFE.search(payload)
    assert len(osc777_title) <= 200 and len(osc777_body) <= 200
    assert osc9 == f"{osc777_title}: {osc777_body}"


def tmux_unwrap(sent: str) -> list[str]:
    """The sequences tmux would pass on, reading `sent` as tmux does: DCS `Ptmux;` strings in
    which a doubled ESC is one ESC and `ESC \\` ends the string."""
    sequences = []
    i = 0
    while i < len(sent):
        assert sent.startswith(f"{ESC}Ptmux;", i), repr(sent[i:])
        i += len(f"{ESC}Ptmux;")
        inner = []
        while True:
            c = sent[i]
            if c == ESC:
                if sent[i + 1] == ESC:
                    inner.append(ESC)
                    i += 2
                    continue
                assert sent[i + 1] == "\\", repr(sent[i:])
                i += 2
                break
            inner.append(c)
            i += 1
        sequences.append("".join(inner))
    return sequences


@given(HOSTILE, HOSTILE)
def test_untrusted_text_cannot_break_out_of_the_tmux_passthrough(title: str, body: str) -> None:
    wrapped = notification(title, body, in_tmux=True)
    plain = notification(title, body, in_tmux=False)
    assert "".join(tmux_unwrap(wrapped)) == plain
    assert len(tmux_unwrap(wrapped)) == 2


@given(st.text(max_size=40))
def test_tmux_wrap_round_trips(sequence: str) -> None:
    assert tmux_unwrap(tmux_wrap(sequence)) == [sequence]


@given(HOSTILE)
def test_untrusted_text_cannot_break_out_of_the_window_title(title: str) -> None:
    sent = window_title(title)
    found = re.fullmatch(r"\x1b\]2;([^\x07\x1b]*)\x07", sent)
    assert found is not None, repr(sent)
    assert not OSC_UNSAFE.search(found[1])
    assert len(found[1]) <= 80


def test_window_title_keeps_ordinary_text() -> None:
    assert window_title("Cockpit (2 waiting)") == f"{ESC}]2;Cockpit (2 waiting){BEL}"


@pytest.mark.parametrize(
    ("waiting", "unread", "expected"),
    [
        (0, 0, "Cockpit"),
        (2, 0, "Cockpit (2 waiting)"),
        (0, 1, "Cockpit (1 unread)"),
        (3, 4, "Cockpit (3 waiting, 4 unread)"),
    ],
)
def test_title_for(waiting: int, unread: int, expected: str) -> None:
    assert title_for(waiting, unread) == expected


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_title_for_reads_back(waiting: int, unread: int) -> None:
    title = title_for(waiting, unread)
    found = re.fullmatch(r"Cockpit(?: \((?:(\d+) waiting)?(?:, )?(?:(\d+) unread)?\))?", title)
    assert found is not None
    assert int(found[1] or 0) == waiting
    assert int(found[2] or 0) == unread


# -- permission prompts -------------------------------------------------------------------------


def request(
    tool_call: Mapping[str, Any], options: tuple[Mapping[str, Any], ...] = ()
) -> PermissionRequest:
    return PermissionRequest("r1", "s1", tool_call, options, created=0.0)


def label(number: int, option: object) -> Content:
    """The label of an option as the agent sent it."""
    return option_label(number, read_permission_option(option))


def test_option_label() -> None:
    assert label(1, {"name": "Allow once", "optionId": "a"}) == "1 Allow once"
    assert label(9, {"optionId": "a"}) == "9 option"
    assert label(2, {"name": "", "optionId": "a"}) == "2 option"
    assert label(3, {"name": 42, "optionId": "a"}) == "3 42"
    assert label(4, "not a mapping") == "4 option"
    assert label(5, {"name": "Allow\x1b]2;pwned\x07 \x1b[31mred", "optionId": "a"}) == "5 Allow red"


@given(st.integers(1, len(KEYS)), HOSTILE)
def test_option_label_never_carries_escapes(number: int, name: str) -> None:
    label = option_label(number, PermissionOption("a", name, "")).plain
    assert label.startswith(f"{number} ")
    assert ESC not in label and BEL not in label and "\x9b" not in label


@pytest.mark.parametrize("name", ["Allow [bold]all[/bold] edits", "Reject [/]"])
def test_an_option_name_shows_literally_on_its_button(name: str) -> None:
    label = Button(option_label(1, PermissionOption("a", name, ""))).label
    assert isinstance(label, Content)
    assert label.plain == f"1 {name}"


@pytest.mark.parametrize(
    ("kind", "variant"),
    [
        ("allow_once", "success"),
        ("allow_always", "success"),
        ("reject_once", "error"),
        ("reject_always", "error"),
        ("", "default"),
        ("other", "default"),
        ("always_allow", "default"),
    ],
)
def test_variant_of(kind: str, variant: str) -> None:
    assert variant_of(kind) == variant


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"command": "ls -la"}, "ls -la"),
        ({"command": ["rm", "-rf", "my dir"]}, "rm -rf 'my dir'"),
        ({"command": ["echo", 3]}, "echo 3"),
        ({"command": "python", "args": ["-c", "print(1)"]}, "python -c 'print(1)'"),
        ({"command": ["python3", "-c", "print('hello')"]}, "python3 -c \"print('hello')\""),
        ({"command": "python3", "args": ["-c", "print('a b')"]}, "python3 -c \"print('a b')\""),
        ({"command": "ls", "args": []}, "ls"),
        ({"command": ""}, None),
        ({"command": 7}, None),
        ({"cmd": "ls"}, None),
        ("ls", None),
        (None, None),
    ],
)
def test_command_of(raw: object, expected: str | None) -> None:
    assert command_of({"rawInput": raw}) == expected


def test_command_of_without_raw_input_or_with_an_empty_list() -> None:
    assert command_of({}) is None
    assert not command_of({"rawInput": {"command": []}})


@given(st.lists(st.text(max_size=10), min_size=1, max_size=5))
def test_a_command_list_is_quoted_so_that_it_splits_back(parts: list[str]) -> None:
    command = command_of({"rawInput": {"command": parts}})
    assert command is not None
    assert shlex.split(command) == parts


def test_request_summary() -> None:
    summary = request_summary(
        request({"title": "Run the tests", "kind": "execute", "rawInput": {"command": "pytest -q"}})
    )
    assert summary.plain == "⚑ The agent asks to: Run the tests  [execute]\n  $ pytest -q"
    same = request(
        {"title": "Run `pytest -q`", "kind": "execute", "rawInput": {"command": "pytest -q"}}
    )
    assert request_summary(same).plain == "⚑ The agent asks to: Run `pytest -q`  [execute]"
    assert request_summary(request({})).plain == "⚑ The agent asks to: a tool call  [other]"


def test_request_summary_strips_escapes_from_the_agents_words() -> None:
    hostile = request(
        {
            "title": "Edit\x1b]2;pwned\x07 file\x1b[2J",
            "kind": "edit",
            "rawInput": {"command": ["echo", "\x1b]52;c;Zm9v\x07hi"]},
        }
    )
    plain = request_summary(hostile).plain
    assert ESC not in plain and BEL not in plain
    assert plain.startswith("⚑ The agent asks to: Edit file  [edit]\n  $ echo ")


@given(HOSTILE, HOSTILE)
def test_request_summary_never_carries_escapes(title: str, command: str) -> None:
    summary = request({"title": title, "kind": "read", "rawInput": {"command": command}})
    plain = request_summary(summary).plain
    assert ESC not in plain and "\x9b" not in plain and "\x9d" not in plain


# -- tool cards ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "status", "terminal", "opens"),
    [
        ("failures", "failed", False, True),
        ("failures", "completed", False, False),
        ("failures", "in_progress", True, True),
        ("failures", "in_progress", False, False),
        ("failures", "completed", True, False),
        ("always", "completed", False, True),
        ("never", "failed", False, False),
        ("never", "in_progress", True, False),
    ],
)
def test_which_cards_open_by_themselves(
    policy: str, status: str, terminal: bool, opens: bool
) -> None:
    assert card_opens(policy, status, terminal) is opens


def test_a_card_knows_when_it_embeds_a_terminal() -> None:
    assert has_terminal(read_tool_call({"content": [{"type": "terminal", "terminalId": "t"}]}))
    assert not has_terminal(
        read_tool_call({"content": [{"type": "diff", "path": "a", "newText": ""}]})
    )
    assert not has_terminal(read_tool_call(None))
    assert not has_terminal(read_tool_call({"content": ["junk"]}))


# --- tool card lines and the rail's title (cockpit.ui.cards, cockpit.ui.rail) ------------


def test_card_paths_are_relative_to_the_session_folder() -> None:
    root = "/tmp/x/proj"
    assert short_path("/tmp/x/proj/README.md", root, home="/home/me") == "README.md"
    assert short_path("/tmp/x/proj/src/a.py", root + "/", home="/home/me") == "src/a.py"
    assert short_path("/tmp/x/proj", root, home="/home/me") == "."
    assert short_path("/tmp/x/project2/a", root, home="/home/me") == "/tmp/x/project2/a"
    assert short_path("/home/me/notes.md", root, home="/home/me") == "~/notes.md"
    assert short_path("/home/me", None, home="/home/me") == "~"
    assert short_path("/etc/passwd", None, home="") == "/etc/passwd"
    assert short_path("relative/a.py", root, home="/home/me") == "relative/a.py"


def test_a_card_line_names_the_file_first_at_80_columns() -> None:
    """The audit's case: `[read] Read README.md (/tmp/x/proj/REA…` lost the file name."""
    payload = {
        "kind": "read",
        "title": "Read README.md",
        "status": "completed",
        "locations": [{"path": "/tmp/x/proj/README.md"}],
    }
    assert card_line(read_tool_call(payload), "/tmp/x/proj") == "[read] Read README.md - done"
    payload["locations"] = [{"path": "/tmp/x/proj/src/store.py", "line": 120}]
    assert (
        card_line(read_tool_call(payload), "/tmp/x/proj")
        == "[read] Read README.md (src/store.py:120) - done"
    )
    codex = {"kind": "edit", "title": "Edit /tmp/x/proj/notes.md", "status": "pending"}
    assert card_line(read_tool_call(codex), "/tmp/x/proj") == "[edit] Edit notes.md - pending"
    assert card_line(read_tool_call(codex), None) == "[edit] Edit /tmp/x/proj/notes.md - pending"


def terminal_payload(status: str, exit_status: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "kind": "execute",
        "title": "Run the tests",
        "status": status,
        "content": [{"type": "terminal", "terminalId": "t1"}],
        "terminalOutput": {"t1": {"output": "ok\n", "exitStatus": exit_status}},
    }


def test_a_finished_command_card_shows_its_exit_code() -> None:
    done = terminal_payload("completed", {"exitCode": 0, "signal": None})
    assert card_line(read_tool_call(done), None) == "[execute] Run the tests - done · exit 0"
    failed = terminal_payload("failed", {"exitCode": 2, "signal": None})
    assert card_line(read_tool_call(failed), None) == "[execute] Run the tests - FAILED · exit 2"
    running = terminal_payload("in_progress", None)
    assert card_line(read_tool_call(running), None) == "[execute] Run the tests - running"
    killed = terminal_payload("failed", {"exitCode": None, "signal": "SIGKILL"})
    assert exit_code(read_tool_call(killed)) is None
    raw = {"kind": "execute", "title": "ls", "status": "completed", "rawOutput": {"exit_code": 1}}
    assert card_line(read_tool_call(raw), None) == "[execute] ls - done · exit 1"
    assert exit_code(read_tool_call({"rawOutput": {"exitCode": True}})) is None
    assert exit_code(read_tool_call(None)) is None


def test_the_rail_title_fits_the_compact_rail() -> None:
    assert rail_title(0, 0) == "Sessions"
    assert rail_title(2, 0) == "Sessions !2"
    assert rail_title(0, 1) == "Sessions ◆1"
    assert rail_title(2, 1) == "Sessions !2 ◆1"
    # The compact rail is 22 columns; its border leaves 18 for the title.
    assert len(rail_title(99, 99)) <= 18


WIDE_OR_ANY = st.one_of(st.characters(), st.sampled_from("修复错误😀한글\u202e\u200b"))


@given(
    title=st.text(WIDE_OR_ANY, min_size=8, max_size=60),
    folder=st.text(WIDE_OR_ANY, min_size=8, max_size=60),
    width=st.integers(12, 30),
    compact=st.booleans(),
    run=st.booleans(),
    current=st.booleans(),
)
def test_every_rail_line_fits_the_rail_in_cells(
    title: str, folder: str, width: int, compact: bool, run: bool, current: bool
) -> None:
    """Titles in wide scripts (CJK, emoji) take two cells a character: the rail cuts by
    cells, so no line overruns it, a run's mark included, which always shows whole, and
    so does the mark of the session on screen."""
    entry = RailEntry("s1", "ready", title, "demo", f"/home/u/{folder}", 90.0, run, current)
    first, *_ = lines = entry_text(entry, compact, width).plain.split("\n")
    for line in lines:
        assert cell_len(line) <= width, line
    assert first.endswith(" run") == run
    if run:
        assert cell_len(first) == width
    assert first.startswith(CURRENT_MARK) == current


@pytest.mark.parametrize("state", list(GLYPHS))
def test_the_session_on_screen_is_marked_beside_its_state(state: str) -> None:
    """The mark of the session on screen has a column of its own: the state glyph stays
    where it is, whole, and no state glyph looks like the mark."""
    entry = RailEntry("s1", state, "fix the tests", "demo", "/p", 5.0)
    shown = entry_text(replace(entry, current=True), True, 20).plain
    other = entry_text(entry, True, 20).plain
    assert shown == f"{CURRENT_MARK}{GLYPHS[state]} fix the tests"
    assert other == f" {GLYPHS[state]} fix the tests"
    assert CURRENT_MARK not in GLYPHS.values()


def test_a_run_ends_its_first_line_with_a_dim_mark() -> None:
    """At the rail's right edge, so the titles still line up; a long title gives way."""
    short = RailEntry("s1", "closed", "bump deps", "demo", "/p", 5.0, True)
    long = RailEntry("s2", "closed", "nightly lint of everything", "demo", "/p", 5.0, True)
    assert entry_text(short, True, 20).plain == " · bump deps     run"
    text = entry_text(long, True, 20)
    assert text.plain == " · nightly lint… run"
    (mark,) = [span for span in text.spans if span.style == "dim"]
    assert text.plain[mark.start : mark.end].strip() == "run"


def test_a_title_with_line_breaks_stays_on_its_line() -> None:
    """A title is the agent's or the user's text: a line break in it would push the rest of
    the entry (and a run's mark) onto lines of their own."""
    entry = RailEntry("s1", "ready", "fix\nthe\r\nbug", "demo", "/p/a\nb", 5.0, True)
    first, second = entry_text(entry, False, 21).plain.split("\n")
    assert first == "   fix the bug    run"
    assert "\n" not in second and "a b" in second


def test_a_wide_title_is_cut_by_cells_with_an_ellipsis() -> None:
    entry = RailEntry("s1", "ready", "修复登录页面的错误并添加测试", "demo", "/p", 5.0)
    line = entry_text(entry, True, 12).plain
    assert line.endswith("…") and cell_len(line) <= 12
