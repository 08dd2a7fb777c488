"""The ACP content blocks that carry the files mentioned in a prompt (`@path`) to the agent.

When a prompt is sent, `mention_blocks` turns its mentions (found by the syntax rules of
`cockpit.text.mentions`) into embedded resources, when the agent advertises
`promptCapabilities.embeddedContext`, or into links; every path is confined to the session's
root first.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from pathlib import Path

from acp import embedded_text_resource, resource_block, resource_link_block

from cockpit.acp_types import ContentBlock
from cockpit.engine.files import OutsideRoot, confine
from cockpit.inside_root import under
from cockpit.text.mentions import find_mentions

MAX_EMBED_BYTES = 256 * 1024
"""Largest file embedded in a prompt by default; bigger ones are sent as links."""

BINARY_SNIFF = 8000
"""Bytes looked at for a NUL to call a file binary (git's heuristic)."""


def mention_blocks(
    text: str, root: Path, embedded: bool, max_bytes: int = MAX_EMBED_BYTES
) -> tuple[list[ContentBlock], list[str]]:
    """ACP blocks for the distinct files mentioned in `text`, and the problems met.

    A file inside `root` becomes an embedded text resource when `embedded` (the agent
    advertises `promptCapabilities.embeddedContext`), else a resource link. Too large (over
    `max_bytes`) or binary files are linked even when embedding; missing files, folders and
    paths outside the root (through `..`, absolute paths or symlinks) get no block. URIs are
    absolute `file://` URIs under the root as given; text is UTF-8 with replacement.
    """
    blocks: list[ContentBlock] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for mention in find_mentions(text):
        shown = f"@{mention.path}"
        try:
            real = confine(root, mention.path)
        except OutsideRoot:
            problems.append(f"{shown}: outside the session's folder, not sent")
            continue
        except (OSError, ValueError) as error:
            problems.append(f"{shown}: {error}")
            continue
        if real in seen:
            continue
        seen.add(real)
        block, problem = _file_block(root, mention.path, real, embedded, max_bytes)
        if block is not None:
            blocks.append(block)
        if problem is not None:
            problems.append(f"{shown}: {problem}")
    return blocks, problems


def _file_block(
    root: Path, mentioned: str, real: Path, embedded: bool, max_bytes: int
) -> tuple[ContentBlock | None, str | None]:
    """The block for one confined file and the problem to report, if any."""
    try:
        info = real.stat()
    except FileNotFoundError:
        return None, "no such file in the session's folder"
    except OSError as error:
        return None, f"cannot read it ({error.strerror or error})"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a file"
    shown = _shown_path(root, mentioned, real)
    uri = shown.as_uri()
    name = shown.name
    mime = mimetypes.guess_type(name)[0]

    def link() -> ContentBlock:
        return resource_link_block(name, uri, mime_type=mime, size=info.st_size)

    if not embedded:
        return link(), None
    if info.st_size > max_bytes:
        size = info.st_size
        return link(), f"too large to embed ({size} bytes, limit {max_bytes}): sent as a link"
    try:
        with real.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        return None, f"cannot read it ({error.strerror or error})"
    if len(data) > max_bytes:
        return link(), f"too large to embed (over {max_bytes} bytes): sent as a link"
    if b"\0" in data[:BINARY_SNIFF]:
        return link(), "binary file: sent as a link"
    content = data.decode("utf-8", "replace")
    resource = embedded_text_resource(uri, content, mime_type=mime or "text/plain")
    return resource_block(resource), None


def _shown_path(root: Path, mentioned: str, real: Path) -> Path:
    """The absolute path the agent is told about: under the root as the session knows it
    (not resolved through symlinks), unless the mention only reaches the root by resolving."""
    absolute_root = os.path.abspath(root)
    lexical = os.path.abspath(os.path.join(absolute_root, os.path.expanduser(mentioned)))
    if under(lexical, absolute_root):
        return Path(lexical)
    return real
