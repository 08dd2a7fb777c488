"""What the bundled agents share as MCP clients of the stdio servers they are handed: how
the mcp SDK starts a server, and the one error worth a sentence when it could not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import McpServerStdio

if TYPE_CHECKING:
    from mcp import StdioServerParameters


def stdio_parameters(server: McpServerStdio) -> StdioServerParameters:
    """How the mcp SDK starts `server`: its command, args and env entries as given."""
    from mcp import StdioServerParameters

    env = {entry.name: entry.value for entry in server.env}
    return StdioServerParameters(command=server.command, args=list(server.args), env=env)


def first_error(error: BaseException) -> BaseException:
    """The first error a (nested) group of them holds: the one worth a sentence."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
