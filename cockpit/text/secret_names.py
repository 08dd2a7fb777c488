"""Which names say they hold a secret (a key, a token, a password): a variable's
(ANTHROPIC_API_KEY, GITHUB_TOKEN) or a form field's ("API key", "password"). One rule,
shared: the engine strips such variables from the commands agents run, shell output masks
their values, and a form masks such fields on screen and in its answer's row."""

from __future__ import annotations

import re

SECRET_NAME = re.compile(
    r"(^|_)(API_?KEY|ACCESS_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_?KEY)(_|$)",
    re.IGNORECASE,
)
"""Names of variables that hold keys: ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY..."""

_WORD_KEY = re.compile(r"(^|_)KEY(_|$)", re.IGNORECASE)
"""A bare "key" word: too broad for variables (a layout's KEYMAP stays), but a form field
named "key" or titled "Your key" asks for one."""


def is_secret(name: str) -> bool:
    """True for a variable name that says it holds a key, a token or a password."""
    return SECRET_NAME.search(name) is not None


def as_name(words: str) -> str:
    """Words as a variable-like name ("API key" -> "API_key"), so the rule reads both."""
    return re.sub(r"[^0-9A-Za-z]+", "_", words).strip("_")


def is_secret_field(*names: str) -> bool:
    """True when any of a form field's names (its key, its title) says it holds a secret."""
    return any(
        is_secret(as_name(name)) or _WORD_KEY.search(as_name(name)) is not None for name in names
    )
