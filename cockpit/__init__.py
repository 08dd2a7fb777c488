"""Cockpit: a terminal cockpit for many ACP coding-agent sessions at once.

Importing the package first tells pydantic to skip the ACP SDK schema's attribute
docstrings, which halves the SDK's import in every Cockpit process (see
`cockpit.compat.pydantic_private`)."""

from cockpit.compat.pydantic_private import skip_schema_docstrings

__version__ = "0.1.0"

skip_schema_docstrings()
