"""The composer: a multi-line prompt box. Enter sends; Ctrl+J (which every terminal sends,
over SSH and tmux too), Shift+Enter or Alt+Enter insert a newline; Up on the first line and
Down on the last walk the prompt history; Esc kills the user's command or cancels the
running turn, and Ctrl+C goes to the app after the keys typed before it; Shift+Tab cycles
the agent's modes; PageUp, PageDown and Ctrl+Home scroll the transcript while the prompt is
one line. Typing `/` at the start or `@` anywhere opens a completion menu. Ctrl+R searches
the earlier prompts, in the same menu. A prompt sent carries the chips showing above it
(the output of the user's commands, `cockpit.ui.shell_chips`); Backspace in an empty
prompt removes the newest."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from rich.text import Text
from textual import events
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option
from textual.widgets.text_area import Selection

from cockpit.bounds import prompt_refusal, prompt_too_long
from cockpit.ui.completion import CompletionToken, completion_token, offset_of
from cockpit.ui.keys_in_order import ran_own_binding
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line
from cockpit.ui.prompt_history import PromptHistory, PromptSearch
from cockpit.ui.shell_chips import ChipShelf
from cockpit.ui.shell_rules import BLANK_COMMAND, blank_command
from cockpit.ui.slash import takes_keys

NEWLINE_KEYS = frozenset({"ctrl+j", "shift+enter", "alt+enter"})
TRANSCRIPT_KEYS = {"pageup": "page_up", "pagedown": "page_down", "ctrl+home": "jump_start"}
"""Keys that scroll the transcript while the prompt is one line (in a longer prompt,
PageUp and PageDown move the cursor by a page, as in any text area)."""
MENU_ROWS = 8
"""Candidates the completion menu shows at once; it scrolls to the others."""
SEARCH_ENDS = frozenset({"escape", "ctrl+c"})
"""Keys that leave a prompt search with the draft as it was."""
SEARCH_TAKES = frozenset({"enter", "tab"})
"""Keys that put the prompt found in the composer (without sending it)."""


@dataclass(frozen=True)
class Candidate:
    """One completion: what replaces the token, and how the menu shows it."""

    replacement: str
    label: str
    detail: str = ""
    positions: tuple[int, ...] = ()
    """Characters of `label` that matched the query (shown bold)."""


Completer = Callable[[str, CompletionToken], Awaitable[list[Candidate]]]
"""What completes a token typed in a session's draft (the session's id, the token)."""


class CompletionMenu(Listing):
    """The candidates for the token being typed, above the composer: all of them, in a
    list MENU_ROWS high that scrolls with the highlight."""

    DEFAULT_CSS = f"""
    CompletionMenu {{
        max-height: {MENU_ROWS + 2};  /* and the border */
        text-wrap: nowrap;  /* one row per candidate, its description cut short */
        text-overflow: ellipsis;
    }}
    """

    def show_candidates(self, candidates: list[Candidate]) -> None:
        self.clear_options()
        for candidate in candidates:
            text = Text(candidate.label)
            for position in candidate.positions:
                if position < len(candidate.label):
                    text.stylize("bold underline", position, position + 1)
            if candidate.detail:
                text.append(f"  {candidate.detail}", style="dim")
            self.add_option(Option(text))
        self.highlighted = 0 if candidates else None
        self.display = bool(candidates)


class Composer(TextArea):
    """Where the user writes prompts."""

    DEFAULT_CSS = """
    Composer {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: round $border-blurred;
        padding: 0 1;
    }
    Composer:focus {
        border: round $border;
    }
    """

    class Asked(Message):
        """What the user asked of the session whose draft the composer held as they typed
        it (not the session on screen when the app reads this: a switch typed right after
        may have come first)."""

        def __init__(self, session: str) -> None:
            super().__init__()
            self.session = session

    class Submitted(Asked):
        """The user sent a prompt, with the chips showing above it as they pressed Enter
        (`attach`: their rows)."""

        def __init__(self, session: str, text: str, attach: tuple[str, ...] = ()) -> None:
            super().__init__(session)
            self.text = text
            self.attach = attach

    class LineTyped(Asked):
        """The user sent a line to what runs in the session and reads input (an agent's
        login), never to the agent: it goes in no prompt history."""

        def __init__(self, session: str, text: str) -> None:
            super().__init__(session)
            self.text = text

    class DraftShown(Asked):
        """The prompt holds another session's draft now (its chips show above it)."""

    class KeyAfterCommand(Message):
        """A key typed after a command whose dialog takes the keys that follow (`/login`),
        in the same burst: it goes to that dialog, never into the prompt."""

        def __init__(self, key: str, character: str | None) -> None:
            super().__init__()
            self.key = key
            self.character = character

    class BlankSubmitted(Asked):
        """The user pressed Enter on a blank prompt (it starts a stopped service again)."""

    class CancelRequested(Asked):
        """The user pressed Esc: kill their command, or cancel the running turn."""

    class InterruptRequested(Asked):
        """The user pressed Ctrl+C (after what they typed before it, a command sent with
        Enter included)."""

    class CycleMode(Asked):
        """The user pressed Shift+Tab: the agent's next mode."""

    def __init__(self, *, id: str | None = None, blink: bool = True) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.cursor_blink = blink
        self.prompts = PromptHistory()
        self.handing_over = False
        """True from a command whose dialog takes the keys typed after it (`/login`) until
        the app holds the keys for that dialog: those typed meanwhile go there."""
        self.session: str | None = None
        """The session whose draft this is: what is typed, sent or asked is its."""
        self.menu: CompletionMenu | None = None
        self.completer: Completer | None = None
        self._token: CompletionToken | None = None
        self._candidates: list[Candidate] = []
        self.search: PromptSearch | None = None
        """The Ctrl+R search under way, if any (the menu shows its matches)."""
        self.chips: ChipShelf | None = None
        self.reads_input: Callable[[str], bool] = lambda session: False
        """Whether what runs in a session reads the lines the user sends (a login): Enter
        then sends the line to it."""
        """The chips of each session: what goes with its next prompt."""

    # -- keys ---------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        """The prompt's own keys, before the text area's (a private method of Textual's,
        named in `cockpit.compat.textual_private.OVERRIDDEN`)."""
        key = event.key
        if self.handing_over:  # typed behind a command whose dialog takes them
            event.stop()
            event.prevent_default()
            self.post_message(self.KeyAfterCommand(key, event.character))
            return
        if self.search is not None and self._search_key(event):
            event.stop()
            event.prevent_default()
            return
        if key == "ctrl+r":
            self.start_search()
            event.stop()
            event.prevent_default()
            return
        if (self._menu_open() and await self._menu_key(key)) or await self._tab_completes(key):
            event.stop()
            event.prevent_default()
            return
        handled = True
        if key == "enter":
            self.submit()
        elif key in NEWLINE_KEYS:
            self.insert("\n")
        elif key == "escape" and self.session is not None:
            self.post_message(self.CancelRequested(self.session))
        elif key == "ctrl+c" and self.session is not None:
            self.post_message(self.InterruptRequested(self.session))
        elif key == "shift+tab" and self.session is not None:
            self.post_message(self.CycleMode(self.session))
        elif key == "up" and self.cursor_location[0] == 0:
            older = self.prompts.older(self.text)
            handled = older is not None
            if older is not None:
                self._replace_all(older)
        elif key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            newer = self.prompts.newer()
            handled = newer is not None
            if newer is not None:
                self._replace_all(newer)
        elif key == "backspace" and not self.text and self.chips is not None:
            handled = self.chips.drop_last(self.session or "")
        elif key in TRANSCRIPT_KEYS and self.document.line_count == 1:
            handled = await self._scroll_transcript(TRANSCRIPT_KEYS[key])
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
            return
        if not await ran_own_binding(self, event):  # Backspace, arrows... in typed order
            await super()._on_key(event)

    async def _scroll_transcript(self, action: str) -> bool:
        """Run a transcript action (a page up or down, the first message) from the prompt."""
        found = self.screen.query("#transcript")
        if not found:
            return False
        await self.app.run_action(action, found.first())
        return True

    def _replace_all(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    def show_draft(self, session: str | None, text: str) -> None:
        """Hold `session`'s draft: its text, the cursor at its end, no undo history
        of the session before and no completion menu. Switching between sessions with the
        same draft (most often none) keeps the document instead of reloading it, and a
        cursor already at the end stays (both repaint and rewrap the prompt)."""
        if session != self.session and session is not None:
            self.post_message(self.DraftShown(session))
        self.session = session
        if text != self.text:
            self.load_text(text)
        else:
            self.history.clear()
        end = self.document.end
        if self.selection != Selection.cursor(end):
            self.move_cursor(end)
        self.end_search()
        self._close_menu()

    def submit(self) -> None:
        """Send what is written (nothing when it is blank; a prompt past the bound on a
        request stays here, and the user is told why)."""
        text = self.text
        if self.session is None:
            return
        if self.reads_input(self.session):  # a login waits for a line (a blank one too)
            if prompt_too_long(text):
                self.notify(prompt_refusal(text), severity="warning", timeout=8, markup=False)
                return
            self.text = ""
            self._close_menu()
            self.post_message(self.LineTyped(self.session, text))
            return
        if not text.strip():
            self.post_message(self.BlankSubmitted(self.session))
            return
        if prompt_too_long(text):
            self.notify(prompt_refusal(text), severity="warning", timeout=8, markup=False)
            return
        if blank_command(text):  # `!` and nothing to run: it stays, and says why
            self.notify(BLANK_COMMAND, severity="warning", timeout=4, markup=False)
            return
        self.prompts.add(text)
        self.text = ""
        self._close_menu()
        self.handing_over = takes_keys(text)
        attach = self.chips.keys(self.session) if self.chips is not None else ()
        self.post_message(self.Submitted(self.session, text, attach))

    # -- searching earlier prompts (Ctrl+R) -----------------------------------------------------

    def start_search(self) -> None:
        """Ctrl+R: search this session's earlier prompts, the newest first. Nothing to
        search is told, and the keys after it go to the draft as ever."""
        if not self.prompts.entries:
            self.notify("No earlier prompts in this session yet.", timeout=2, markup=False)
            return
        self._close_menu()
        self.search = PromptSearch(self.prompts.entries)
        self._show_search()

    def end_search(self, take: str | None = None) -> None:
        """Leave the search: the draft as it was, or `take` in its place (not sent)."""
        if self.search is None:
            return
        self.search = None
        self.border_title = None
        self.border_subtitle = None
        if self.menu is not None:
            self.menu.display = False
        if take is not None:
            self._replace_all(take)

    def _search_key(self, event: events.Key) -> bool:
        """A key typed while searching; False lets it through (after taking the match, as a
        shell does for a key the search has no use for)."""
        search = self.search
        assert search is not None
        key = event.key
        if key in SEARCH_ENDS:
            self.end_search()
        elif key in SEARCH_TAKES:
            self.end_search(search.match)
        elif key in ("ctrl+r", "up"):
            search.older()
        elif key == "down":
            search.newer()
        elif key == "backspace":
            search.erase()
        elif event.is_printable and event.character:
            search.type(event.character)
        else:
            self.end_search(search.match)
            return False
        if self.search is not None:
            self._show_search()
        return True

    def _show_search(self) -> None:
        """The query in the composer's border, the matches in the menu above it."""
        search = self.search
        assert search is not None
        found = f"{search.chosen + 1}/{len(search.matches)}" if search.matches else "no match"
        self.border_title = Content(clean_line(f"Search prompts: {search.query}") + "▏")
        self.border_subtitle = Content(f"{found} · Enter takes · Esc leaves")
        if self.menu is None:
            return
        self.menu.show_candidates([self._search_line(m, search.query) for m in search.matches])
        self.menu.highlighted = search.chosen if search.matches else None

    @staticmethod
    def _search_line(prompt: str, query: str) -> Candidate:
        """A match as one menu line, the query's letters marked."""
        line = clean_line(prompt)
        start = line.lower().find(query.lower()) if query else -1
        marked = tuple(range(start, start + len(query))) if start >= 0 else ()
        return Candidate(prompt, line, "", marked)

    # -- completion ---------------------------------------------------------------------------

    def _menu_open(self) -> bool:
        return self.menu is not None and self.menu.display and bool(self._candidates)

    async def _tab_completes(self, key: str) -> bool:
        """Tab on a word to complete whose menu has not come yet (typed in one burst with
        it) completes it. False when nothing would: Tab then moves on, as it does from a
        word with nothing to complete."""
        if key != "tab" or self.completer is None or self.menu is None:
            return False
        if self._token_now() is None or not await self._catch_up():
            return False
        self.accept(self.menu.highlighted or 0)
        return True

    async def _menu_key(self, key: str) -> bool:
        """Keys that work the menu while it is open; False lets the key through."""
        assert self.menu is not None
        if key in ("up", "down"):
            count = len(self._candidates)
            current = self.menu.highlighted or 0
            self.menu.highlighted = (current + (1 if key == "down" else -1)) % count
            return True
        if key in ("tab", "enter"):
            if not await self._catch_up():
                return key == "tab"  # nothing completes the word now: Enter sends
            index = self.menu.highlighted or 0
            if key == "enter" and self._typed_whole(index):
                return False  # "/help" typed out: Enter sends it, as without the menu
            self.accept(index)
            return True
        if key == "escape":
            self._close_menu()
            return True
        return False

    def _typed_whole(self, index: int) -> bool:
        """True when the token already is candidate `index` in full (its replacement, but
        for the space it would add)."""
        token = self._token
        if token is None or not 0 <= index < len(self._candidates):
            return False
        typed = self.text[token.start : token.end]
        return typed == self._candidates[index].replacement.rstrip()

    def accept(self, index: int) -> None:
        """Replace the token with candidate `index`."""
        token = self._token
        if token is None or not 0 <= index < len(self._candidates):
            return
        text = self.text
        replacement = self._candidates[index].replacement
        new = text[: token.start] + replacement + text[token.end :]
        self.text = new
        lines = new[: token.start + len(replacement)].split("\n")
        self.move_cursor((len(lines) - 1, len(lines[-1])))
        self._close_menu()

    def _close_menu(self) -> None:
        self._token = None
        self._candidates = []
        if self.menu is not None:
            self.menu.display = False

    def _token_now(self) -> CompletionToken | None:
        """The word under the cursor as the text is now."""
        row, column = self.cursor_location
        return completion_token(self.text, offset_of(self.document.lines, row, column))

    async def _catch_up(self) -> bool:
        """Make the open menu the one of the word as typed now: keys typed fast reach the
        prompt before the menu of the word they made (Tab right after `@not` accepted
        the menu of `@no` over `@no`, leaving the `t` behind). True when there is a
        candidate to accept."""
        token = self._token_now()
        if token != self._token:
            if token is None:
                self._close_menu()
                return False
            await self._complete(token)
        return bool(self._candidates)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self.completer is None or self.menu is None or self.search is not None:
            return  # a change typed before Ctrl+R in its burst: the menu is the search's
        token = self._token_now()
        if token is None:
            self._close_menu()
            return
        # A partial, not a coroutine: a worker replaced before it starts makes none.
        work: Callable[[], object] = partial(self._complete, token)
        self.run_worker(work, group="completion", exclusive=True)

    async def _complete(self, token: CompletionToken) -> None:
        assert self.completer is not None
        assert self.menu is not None
        candidates = await self.completer(self.session, token) if self.session else []
        if token != self._token_now() or self.search is not None:
            return  # typed on meanwhile (or accepted, or a search began): not this menu
        self._token = token if candidates else None
        self._candidates = candidates
        self.menu.show_candidates(candidates)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list is not self.menu:
            return
        if self.search is not None:
            self.search.choose(event.option_index)
            self.end_search(self.search.match)
        else:
            self.accept(event.option_index)
