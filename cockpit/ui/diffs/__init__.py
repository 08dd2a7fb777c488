"""Diffs of the file edits an agent reports (ACP `diff` content items), for tool cards.

The package is in rooms by job: `model` (the diff as rows, hunks, counts and folding: plain
Python on `difflib`, tested without a terminal, importing nothing of Textual), `palette`
(the theme's diff colours as Rich styles), `highlight` (the code's syntax colours and the
changed words of an edited line), `wrapping` (where a long line breaks) and `render`
(unified and side-by-side renderings, as Rich renderables a Textual `Static` shows).

The texts come from an agent, so they are untrusted: escape sequences and control
characters are removed before anything is compared or shown.

The `textual-diff-view` package (Toad's diff widget) was considered and not used: it is
licensed AGPL-3.0.
"""
