"""The permission options a bundled agent offers when it asks before a tool runs."""

from __future__ import annotations

from acp.schema import PermissionOption

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow-always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]
ALLOWING = frozenset({"allow", "allow-always"})
"""The option ids that let the tool run."""
