"""What the model is told: the system prompt of a session folder, and the tools it may
call (their schemas, the ACP kind each shows as, and which of them change something)."""

from __future__ import annotations

from typing import Any

from acp.schema import ToolKind

from cockpit.agentkit.claude.config import COMMAND_TIMEOUT

SYSTEM_PROMPT = """\
You are Claude, a coding agent working inside Cockpit, a terminal cockpit for coding \
agents. You help the user with software engineering work in their project folder:

    {cwd}

Relative paths are resolved against that folder; you cannot reach files outside it.

# How to work
- Read before you change: use list_files, search and read_file to understand the code, \
then make focused changes with edit_file (a unique piece of text replaced) or write_file \
(a whole new file). Keep the style of the surrounding code.
- Use run_command for builds, tests, linters and git. Commands run in a shell in the \
project folder and must not wait for input.
- The user sees every tool call. Edits and commands may need their permission: if they \
reject one, do not retry it; say what you wanted to do and ask how to proceed.
- The session may be in plan mode, where edits and commands are refused: then describe \
the plan precisely instead of changing anything.
- Be concise. Answer in Markdown. When you are done, say what you changed and how you \
checked it.
"""


def system_prompt(cwd: str) -> str:
    """The system prompt for a session folder (fixed for the session: it heads the cache)."""
    return SYSTEM_PROMPT.format(cwd=cwd)


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    """One tool definition as the Messages API takes it."""
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": required},
    }


PATH = {"type": "string", "description": "A path, relative to the project folder."}
TOOLS: tuple[dict[str, Any], ...] = (
    _tool(
        "read_file",
        "Read a text file. Returns its content; long files are cut, so use offset and limit "
        "to read them in parts.",
        {
            "path": PATH,
            "offset": {"type": "integer", "description": "First line to read (1-based)."},
            "limit": {"type": "integer", "description": "How many lines to read."},
        },
        ["path"],
    ),
    _tool(
        "write_file",
        "Create a file, or replace a whole file, with the given content.",
        {"path": PATH, "content": {"type": "string", "description": "The complete new text."}},
        ["path", "content"],
    ),
    _tool(
        "edit_file",
        "Replace a piece of text in a file. old_text must appear exactly once in the file "
        "(include enough surrounding lines), unless replace_all is true.",
        {
            "path": PATH,
            "old_text": {"type": "string", "description": "The exact text to replace."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
        },
        ["path", "old_text", "new_text"],
    ),
    _tool(
        "run_command",
        "Run a shell command in the project folder and return its output and exit code.",
        {
            "command": {"type": "string", "description": "The command line (run by /bin/sh)."},
            "timeout_seconds": {
                "type": "integer",
                "description": f"Kill the command after this long (default {COMMAND_TIMEOUT}).",
            },
        },
        ["command"],
    ),
    _tool(
        "list_files",
        "List the files and folders under a folder, a few levels deep.",
        {
            "path": {**PATH, "description": "A folder (default: the project folder)."},
            "depth": {"type": "integer", "description": "Levels to descend (default 3)."},
        },
        [],
    ),
    _tool(
        "search",
        "Search file contents for an extended regular expression (grep -E). Returns "
        "matching lines as path:line:text.",
        {
            "pattern": {"type": "string", "description": "The regular expression."},
            "path": {**PATH, "description": "A file or folder (default: the project folder)."},
            "glob": {"type": "string", "description": "Only files whose name matches, e.g. *.py"},
        },
        ["pattern"],
    ),
)
TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "run_command": "execute",
    "list_files": "search",
    "search": "search",
}
CHANGES = frozenset({"write_file", "edit_file", "run_command"})
"""Tools that change something: refused in plan mode, and asked for in ask mode."""
