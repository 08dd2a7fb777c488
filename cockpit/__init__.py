"""Cockpit: a terminal cockpit for many ACP coding-agent sessions at once.

Importing the package first tells pydantic to skip the ACP SDK schema's attribute
docstrings and to build each model at its first use, which cuts the SDKs' import in every
Cockpit process by more than half (see `cockpit.compat.pydantic_private`)."""

from cockpit.compat.pydantic_private import build_models_when_used, skip_schema_docstrings

__version__ = "0.1.0"

skip_schema_docstrings()
build_models_when_used()
