"""Replacing a file whole: the settings, an agent's fs/* writes and the demo agent's
histories all go through `write_atomically`, so a reader or a crash never meets half a
file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace `path` with `data`, with permissions `mode`: a reader sees the old file or
    the new one, and a crash leaves the old one.

    The data goes to a new temporary file beside `path` (the same file system, so the
    rename is atomic), created exclusively: a link or file planted under its name is never
    opened. It gets `mode` through its descriptor and reaches the disk before the rename.
    A link at `path` itself is replaced, not written through. On failure the old file
    stays and no temporary file is left."""
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".cockpit", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
