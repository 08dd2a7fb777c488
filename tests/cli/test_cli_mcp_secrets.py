"""A secret an MCP server's value names (`${NAME}` in `mcp.toml`) reaches the agent from the
environment of the command that started it, and is never written by Cockpit: not in the
store, the logs, the chunk logs or `events --json`, through the service and with
`--local`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_modes import MODES, run_in

SECRET = "mcp-secret-4f1d9a"


@pytest.mark.parametrize("mode", MODES)
def test_a_named_secret_is_handed_and_never_written(
    mode: str, cli_home: Path, tmp_path: Path
) -> None:
    (cli_home / "config").mkdir(parents=True, exist_ok=True)
    (cli_home / "config" / "mcp.toml").write_text(
        '[servers.files]\ncommand = "files-mcp"\nenv = { FILES_TOKEN = "${FILES_TOKEN}" }\n'
    )
    project = tmp_path / "project"
    project.mkdir()
    env = {"FILES_TOKEN": SECRET}
    ran = run_in(mode, cli_home, "run", "--agent", "demo", "--cwd", str(project), "hello",
                 env_extra=env)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "Your MCP servers handed to the agent: files." in ran.stdout + ran.stderr
    said = ran.stdout + ran.stderr
    if mode == "service":  # the events are the service's
        events = run_in(mode, cli_home, "events", "--json", env_extra=env)
        assert events.returncode == 0, events.stderr
        said += events.stdout + events.stderr
    assert SECRET not in said
    written = [path for path in cli_home.rglob("*") if path.is_file()]
    assert any(path.name == "cockpit.db" for path in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
