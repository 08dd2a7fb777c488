"""What the demo agent reads in a prompt: its text, the files it mentions, the scenario
words it holds, and the seed that makes the same prompt stream the same pieces."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from cockpit.acp_types import ContentBlock


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    """The prompt's text: its text blocks concatenated."""
    return "".join(block.text for block in blocks if isinstance(block, TextContentBlock))


def mentions(blocks: Sequence[ContentBlock]) -> list[str]:
    """One note per mentioned file: embedded resources with their size, links by URI."""
    notes: list[str] = []
    for block in blocks:
        if isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                notes.append(f"`{resource.uri}` ({len(resource.text)} characters)")
            else:
                notes.append(f"`{resource.uri}` (binary, {len(resource.blob)} base64 characters)")
        elif isinstance(block, ResourceContentBlock):
            notes.append(f"`{block.uri}` (a link)")
    return notes


def scenario_words(text: str, scenarios: dict[str, str]) -> list[str]:
    """The words of `scenarios` in `text`, in running order; the tour when there are none."""
    lowered = text.lower()
    found = {word for word in scenarios if re.search(rf"\b{word}\b", lowered)}
    return [word for word in scenarios if word in found] or ["tour"]


def turn_seed(text: str) -> int:
    """A seed from the prompt, so the same prompt always streams the same pieces."""
    return zlib.crc32(text.encode("utf-8"))
