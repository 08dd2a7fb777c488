"""The commands of repositories' `.cockpit.toml` the user approved. A repository is
someone else's code: its setup or test command runs only once the user approved that exact
text for that repository. What is kept is a hash of the repository, the kind and the
text, so a changed command (or the same one in another repository) asks again. The file
is read at each use: an approval given by another client counts at once."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cockpit.atomic_file import write_atomically

APPROVALS_NAME = "approved-commands.json"
"""The file, in Cockpit's private data folder."""
KINDS = ("setup", "test", "mcp")
"""What may be approved: a setup or test command, or an MCP server (its whole text)."""


def approval_key(repository: str, kind: str, command: str) -> str:
    """What stands for approving `command` as `kind` in `repository`."""
    joined = "\0".join((repository, kind, command))
    return hashlib.sha256(joined.encode("utf-8", "surrogateescape")).hexdigest()


class Approvals:
    """The approvals kept in `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> set[str]:
        try:
            value = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return set()
        except (OSError, ValueError):  # unreadable: nothing counts as approved
            return set()
        keys = value.get("approved") if isinstance(value, dict) else None
        return {key for key in keys if isinstance(key, str)} if isinstance(keys, list) else set()

    def approved(self, repository: str, kind: str, command: str) -> bool:
        """True when the user approved `command` as `kind` for `repository`."""
        return approval_key(repository, kind, command) in self._read()

    def approve(self, repository: str, kind: str, command: str) -> None:
        """Approve `command` as `kind` for `repository` (OSError when it cannot be kept)."""
        if kind not in KINDS:
            raise ValueError(f"not a kind of command: {kind!r}")
        keys = self._read() | {approval_key(repository, kind, command)}
        text = json.dumps({"approved": sorted(keys)}, indent=1)
        write_atomically(self.path, text.encode())
