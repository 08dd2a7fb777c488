"""The ACP SDK's types as Cockpit names them, written once: unions the SDK spells out at each
use. The engine and the bundled agents import them from here; nothing else of Cockpit's."""

from __future__ import annotations

from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
"""A block of a prompt (or of a message an agent sends), as the SDK models it."""
