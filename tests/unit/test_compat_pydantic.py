"""The pydantic hook Cockpit replaces (`cockpit.compat.pydantic_private`) still exists and is
still what reads attribute docstrings: when pydantic moves it, a test here fails saying so,
instead of every Cockpit process silently importing the ACP SDK twice as slowly."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

from pydantic._internal import _config, _fields

from cockpit.compat import pydantic_private

WHERE = "see cockpit/compat/pydantic_private.py"


def fresh(code: str) -> str:
    """What `code` prints in a fresh interpreter (nothing imported before it)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_the_installed_pydantic_is_the_one_the_hook_was_checked_with() -> None:
    installed = version("pydantic")
    assert installed.startswith(pydantic_private.TESTED_WITH + "."), (
        f"pydantic is {installed}, not {pydantic_private.TESTED_WITH}.x: check that "
        f"pydantic._internal._fields.{pydantic_private._HOOK} still copies attribute "
        f"docstrings into descriptions ({WHERE}), then set TESTED_WITH"
    )


def test_pydantic_still_has_the_hook_and_importing_cockpit_replaced_it() -> None:
    hook = getattr(_fields, pydantic_private._HOOK, None)
    assert hook is not None, (
        f"pydantic._internal._fields.{pydantic_private._HOOK} is gone: find what reads "
        f"attribute docstrings now ({WHERE})"
    )
    assert getattr(hook, "cockpit_skips", False), "importing cockpit did not install the skip"


def test_the_sdk_schema_skips_its_docstrings_and_still_validates() -> None:
    printed = fresh(
        """
        import cockpit, acp.schema as s
        print(repr(s.TextContentBlock.model_fields['text'].description))
        print(s.TextContentBlock.model_validate({'type': 'text', 'text': 'hi'}).text)
        """
    )
    assert printed.splitlines() == ["None", "hi"]


def test_without_cockpit_the_sdk_reads_its_docstrings_so_the_skip_is_what_differs() -> None:
    printed = fresh(
        """
        import acp.schema as s
        print(repr(s.TextContentBlock.model_fields['text'].description))
        """
    )
    assert printed != "None", (
        f"acp.schema no longer asks for attribute docstrings: the skip in {WHERE} can go"
    )


def test_other_models_keep_their_attribute_docstrings(tmp_path: Path) -> None:
    # pydantic reads the class's source, so the model lives in a file, not in `-c`.
    model = tmp_path / "mine.py"
    model.write_text(
        "import cockpit\n"
        "from pydantic import BaseModel, ConfigDict\n"
        "\n"
        "class Mine(BaseModel):\n"
        "    model_config = ConfigDict(use_attribute_docstrings=True)\n"
        "    name: str\n"
        '    """What it is called."""\n'
        "\n"
        "print(Mine.model_fields['name'].description)\n"
    )
    done = subprocess.run(
        [sys.executable, str(model)], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "What it is called."


def test_pydantic_still_keeps_its_defaults_in_the_table_cockpit_changes() -> None:
    defaults = getattr(_config, "config_defaults", None)
    assert isinstance(defaults, dict) and pydantic_private.DEFER_BUILD in defaults, (
        f"pydantic._internal._config.config_defaults no longer holds "
        f"{pydantic_private.DEFER_BUILD!r}: find where model settings default now ({WHERE})"
    )


def test_models_are_built_at_their_first_use_and_then_validate_as_before() -> None:
    printed = fresh(
        """
        import cockpit, acp.schema as s
        print(s.AgentMessageChunk.__pydantic_complete__)
        chunk = s.AgentMessageChunk.model_validate(
            {'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': 'hi'}}
        )
        print(s.AgentMessageChunk.__pydantic_complete__, chunk.content.text)
        try:
            s.AgentMessageChunk.model_validate({'sessionUpdate': 'agent_message_chunk'})
        except Exception as error:
            print(type(error).__name__)
        """
    )
    assert printed.splitlines() == ["False", "True hi", "ValidationError"]


def test_without_cockpit_the_sdk_builds_its_models_at_import() -> None:
    printed = fresh("import acp.schema as s; print(s.AgentMessageChunk.__pydantic_complete__)")
    assert printed == "True", "pydantic defers builds by itself now: the change can go"
