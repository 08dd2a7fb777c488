"""One Claude turn: the step loop (a model call, the tool calls it made, the prompts that
arrived meanwhile, until the model stops), the model's stream relayed to the client and
sealed block by block into the log, and every call recorded for `cockpit inspect`. The
tools themselves are `ToolCalls` (`tool_calls.py`). A turn gets the client connection and
the model's API client, never the agent that runs it."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from acp.core import AgentSideConnection
from acp.helpers import start_tool_call
from acp.schema import PromptResponse, StopReason, ToolCallLocation, Usage

from cockpit.agentkit.claude.chunks import message_chunk, thought_chunk, user_chunk
from cockpit.agentkit.claude.config import MAX_STEPS
from cockpit.agentkit.claude.failures import ModelFailure, api_request_error, describe_api_error
from cockpit.agentkit.claude.instructions import TOOL_KINDS
from cockpit.agentkit.claude.session import Queued, Session
from cockpit.agentkit.claude.tool_calls import Call, Outcome, ToolCalls
from cockpit.agentkit.claude.tool_input import describe_call
from store import entries as log_entries
from store.requests import compose_request

if TYPE_CHECKING:
    import anthropic

log = logging.getLogger("claude-agent")


@dataclass
class OpenBlock:
    """A content block still streaming."""

    kind: str
    message_id: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    call_id: str = ""
    name: str = ""
    data: str = ""

    @property
    def text(self) -> str:
        """The text streamed so far."""
        return "".join(self.parts)


@dataclass
class StepResult:
    """What one model call produced."""

    stop_reason: str
    calls: list[Call]


class Turn(ToolCalls):
    """One prompt being answered: the step loop, the stream, the tools."""

    def __init__(
        self,
        conn: AgentSideConnection,
        model_client: Callable[[], anthropic.AsyncAnthropic],
        session: Session,
        usage: dict[str, int] | None = None,
    ) -> None:
        self.conn = conn
        self.model_client = model_client
        """The API client, made at the first model call (see `ClaudeAgent.client`)."""
        self.session = session
        self.id = uuid.uuid4().hex[:16]
        self.spec = session.spec()
        """The model and thinking settings, fixed for the whole turn: with thinking on, the
        API refuses a tool-loop step whose last assistant message does not open with a
        thinking block, so a setting changed mid-turn applies from the next turn."""
        self.step = 0
        self.open: dict[int, OpenBlock] = {}
        self.unanswered: dict[str, Call] = {}
        self.joined: list[Queued] = []
        """Queued prompts this turn logged: their requests are answered when it ends."""
        self.usage = (
            usage if usage is not None else {"input": 0, "write": 0, "read": 0, "output": 0}
        )
        self.notes = 0
        self.response: dict[str, Any] = {"content": []}
        """What the current model call returned so far (recorded for `cockpit inspect`)."""
        self.call_usage: dict[str, int] = {}

    async def note(self, kind: str, text: str) -> None:
        """A visible agent message that the model never sees (logged as a system note)."""
        self.notes += 1
        message_id = f"{self.id}-note-{self.notes}"
        await self.session.append(
            self.id, self.step, log_entries.system_note(kind, text, message_id)
        )
        await self.send(message_chunk(text, message_id))

    # -- the loop -----------------------------------------------------------------------------

    async def run(self, text: str | None) -> PromptResponse:
        """Answer one prompt (None: the queued prompts a previous turn left unanswered); a
        cancel, an API error or a stop reason ends the loop. Prompts still queued when the
        turn is cancelled or fails are logged after its end, so none is lost."""
        try:
            if text is not None:  # the prompt is logged before any call
                prompt = log_entries.user_text(text, f"{self.id}-user-0")
                await self.session.append(self.id, 0, prompt)
            await self.start_servers()
            await self.take_queued()
            stop = await self.loop()
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            await self.settle("Cancelled by the user before the tool finished.", notify=False)
            await self.session.append(self.id, self.step, log_entries.system_note("cancelled"))
            await self.take_queued()
            stop = "cancelled"
        except ModelFailure as failure:
            await self.settle("Not run: the model call failed.")
            await self.session.append(
                self.id,
                self.step,
                log_entries.error(str(failure), f"{self.id}-error-{self.step}", failure.status),
            )
            await self.take_queued()
            raise api_request_error(failure) from failure
        return PromptResponse(stop_reason=stop, usage=self.usage_total())

    async def start_servers(self) -> None:
        """Start the session's MCP servers at its first turn (a notice for each one that
        could not start), and offer their tools from this turn on."""
        for notice in await self.session.servers.open():
            await self.note("mcp", notice)
        self.spec = self.session.spec()

    async def loop(self) -> StopReason:
        """Call the model and run its tools, step after step, until a stop reason."""
        while True:
            if self.step >= MAX_STEPS:
                await self.note(
                    "max_turn_requests",
                    f"I stopped after {MAX_STEPS} model calls in one turn. "
                    "Send a prompt to let me continue.",
                )
                return "max_turn_requests"
            self.step += 1
            result = await self.call_model()
            if result.stop_reason in ("max_tokens", "model_context_window_exceeded"):
                await self.settle("Not run: the reply was cut at the output token limit.")
                what = (
                    "its context window is full"
                    if result.stop_reason == "model_context_window_exceeded"
                    else "it reached the output token limit"
                )
                await self.note("max_tokens", f"The model stopped: {what}.")
                return "max_tokens"
            if result.stop_reason == "refusal":
                await self.settle("Not run: the model refused.")
                await self.note(
                    log_entries.REFUSAL,
                    "The model declined to continue. This prompt and its reply are left out of "
                    "the context of later prompts.",
                )
                return "refusal"
            for call in result.calls:
                await self.run_tool(call)
            queued = await self.take_queued()
            if not result.calls and not queued:
                return "end_turn"

    async def take_queued(self) -> bool:
        """Log the prompts that arrived during this step, after its tool results, and show
        each where it lands (as a user message under the id a replay sends it with). Their
        requests join this turn."""
        taken = 0
        while self.session.queued:  # one may arrive while another is written
            item = self.session.queued.pop(0)
            taken += 1
            self.joined.append(item)  # before the write: a cancel now still answers it
            message_id = f"{self.id}-user-{self.step}-{len(self.joined)}"
            draft = log_entries.user_text(item.text, message_id)
            await self.session.append(self.id, self.step, draft)
            await self.send(user_chunk(item.text, message_id))
        return taken > 0

    async def settle(self, why: str, notify: bool = True) -> None:
        """Give every tool call of this step that has no result an error result, so the log
        stays a valid conversation. After a cancel the client is not told: it marks the
        open calls cancelled itself."""
        for call in list(self.unanswered.values()):
            await self.record_result(call, Outcome(why, ok=False), notify)

    def usage_total(self) -> Usage:
        """The turn's token usage as ACP reports it (inputs include the cached ones)."""
        used = self.usage
        total_input = used["input"] + used["write"] + used["read"]
        return Usage(
            input_tokens=total_input,
            output_tokens=used["output"],
            cached_read_tokens=used["read"],
            cached_write_tokens=used["write"],
            total_tokens=total_input + used["output"],
        )

    # -- the model call -----------------------------------------------------------------------

    async def call_model(self) -> StepResult:
        """Send the request composed from the log, stream the reply into the client and the
        log (each block written as it seals), and record the call for `cockpit inspect`."""
        session = self.session
        spec = self.spec
        request = compose_request(session.entries, spec)
        upto = session.entries[-1].seq
        number = await asyncio.shield(session.log.begin_call(self.id, self.step, upto, spec))
        self.open = {}
        self.response = {"content": []}
        self.call_usage = {}
        calls: list[Call] = []
        stop_reason = "end_turn"
        import anthropic  # at the first call: see `cockpit.agentkit.claude.agent`

        try:
            client = self.model_client()
            stream = await cast(Any, client.messages).create(**request)
            async with stream:
                async for event in stream:
                    stop_reason = await self.on_event(event, calls) or stop_reason
        except asyncio.CancelledError:
            await self.seal_partial()
            await self.end_call(number, "cancelled", None)
            raise
        except anthropic.APIError as error:
            await self.seal_partial()
            message = describe_api_error(error)
            await self.end_call(number, "error", None, message)
            raise ModelFailure(message, getattr(error, "status_code", None)) from error
        except Exception as error:  # a bug or an unexpected reply: recorded, then reported
            log.exception("the model call failed")
            await self.seal_partial()
            message = f"The model call failed unexpectedly: {error!r}"
            await self.end_call(number, "error", None, message)
            raise ModelFailure(message) from error
        self.response["stop_reason"] = stop_reason
        await self.end_call(number, "ok", stop_reason)
        return StepResult(stop_reason, calls)

    async def end_call(
        self, number: int, status: str, stop_reason: str | None, error: str | None = None
    ) -> None:
        """Add the call's usage to the turn's and record how the call ended."""
        used = self.call_usage
        self.usage["input"] += used.get("input_tokens", 0)
        self.usage["write"] += used.get("cache_creation_input_tokens", 0)
        self.usage["read"] += used.get("cache_read_input_tokens", 0)
        self.usage["output"] += used.get("output_tokens", 0)
        await asyncio.shield(
            self.session.log.end_call(
                number,
                status=status,
                stop_reason=stop_reason,
                response=self.response,
                usage=used or None,
                error=error,
            )
        )

    def take_usage(self, usage: Any) -> None:
        """Keep the token counts a stream event reports (the latest of each wins)."""
        if usage is None:
            return
        for name in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        ):
            value = getattr(usage, name, None)
            if isinstance(value, int):
                self.call_usage[name] = value

    async def on_event(self, event: Any, calls: list[Call]) -> str | None:
        """Apply one stream event; returns the stop reason when the event carries one."""
        kind = event.type
        if kind == "message_start":
            self.response["id"] = event.message.id
            self.response["model"] = event.message.model
            self.take_usage(event.message.usage)
        elif kind == "content_block_start":
            self.start_block(event.index, event.content_block)
        elif kind == "content_block_delta":
            await self.on_delta(event.index, event.delta)
        elif kind == "content_block_stop":
            block = self.open.pop(event.index, None)
            if block is not None:
                call = await self.seal(block)
                if call is not None:
                    calls.append(call)
        elif kind == "message_delta":
            self.take_usage(event.usage)
            return cast(str | None, event.delta.stop_reason)
        return None

    def start_block(self, index: int, block: Any) -> None:
        """Open a block the stream started (its message id names turn, step and index)."""
        message_id = f"{self.id}-{self.step}-{index}"
        if block.type == "text":
            self.open[index] = OpenBlock("text", message_id, [block.text or ""])
        elif block.type == "thinking":
            self.open[index] = OpenBlock(
                "thinking", message_id, [block.thinking or ""], block.signature or ""
            )
        elif block.type == "redacted_thinking":
            self.open[index] = OpenBlock("redacted", data=block.data)
        elif block.type == "tool_use":
            self.open[index] = OpenBlock("tool_use", call_id=block.id, name=block.name)
        else:
            self.open[index] = OpenBlock("ignored")

    async def on_delta(self, index: int, delta: Any) -> None:
        """Add a stream delta to its open block; text and thinking go to the client at once."""
        block = self.open.get(index)
        if block is None:
            return
        if delta.type == "text_delta" and delta.text:
            block.parts.append(delta.text)
            await self.send(message_chunk(delta.text, block.message_id))
        elif delta.type == "thinking_delta" and delta.thinking:
            block.parts.append(delta.thinking)
            await self.send(thought_chunk(delta.thinking, block.message_id))
        elif delta.type == "signature_delta":
            block.signature += delta.signature
        elif delta.type == "input_json_delta":
            block.parts.append(delta.partial_json)

    async def seal(self, block: OpenBlock) -> Call | None:
        """Write a finished block to the log; a tool call is also announced to the client."""
        content: list[Any] = self.response["content"]
        if block.kind == "text" and block.text:
            await self.session.append(
                self.id, self.step, log_entries.assistant_text(block.text, block.message_id)
            )
            content.append({"type": "text", "text": block.text})
        elif block.kind == "thinking" and (block.signature or block.text):
            await self.session.append(
                self.id,
                self.step,
                log_entries.thinking(block.text, block.signature, block.message_id),
            )
            content.append(
                {"type": "thinking", "thinking": block.text, "signature": block.signature}
            )
        elif block.kind == "redacted":
            await self.session.append(self.id, self.step, log_entries.redacted_thinking(block.data))
            content.append({"type": "redacted_thinking", "data": block.data})
        elif block.kind == "tool_use":
            call = self.make_call(block)
            display = {"title": call.title, "kind": call.kind, "locations": call.locations}
            await self.session.append(
                self.id, self.step, log_entries.tool_call(call.id, call.name, call.input, display)
            )
            content.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
            )
            self.unanswered[call.id] = call
            await self.send(
                start_tool_call(
                    call.id,
                    call.title,
                    kind=call.kind,
                    status="pending",
                    locations=[ToolCallLocation(path=p) for p in call.locations] or None,
                    raw_input=call.input,
                )
            )
            return call
        return None

    async def seal_partial(self) -> None:
        """After a cancel or a failure mid-stream: keep the text that streamed (it is valid
        history), drop an unsigned thinking block and an unfinished tool call."""
        for index in sorted(self.open):
            block = self.open[index]
            if block.kind == "text" and block.text.strip():
                await self.seal(block)
                self.response["content"][-1]["partial"] = True
        self.open = {}

    def make_call(self, block: OpenBlock) -> Call:
        """A sealed tool_use block as a call (unparsable input is kept, to be refused)."""
        raw = block.text.strip()
        try:
            parsed = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            parsed = {"_unparsed": raw}
        arguments = parsed if isinstance(parsed, dict) else {"value": parsed}
        server_tool = self.session.servers.find(block.name)
        if server_tool is not None:
            title, locations = server_tool.title, list[str]()
        else:
            title, locations = describe_call(self.session.cwd, block.name, arguments)
        kind = TOOL_KINDS.get(block.name, "other")
        return Call(block.call_id, block.name, arguments, title, kind, locations)
