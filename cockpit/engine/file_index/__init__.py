"""`@` completion's file index: the files under a session's root and a fuzzy search over them.

Engine-side and UI-free (no Textual import). One module per job: `gitignore` (the ignore
rules a walk outside git applies), `listing` (which files are there: `git ls-files` or a walk),
`fuzzy` (how well one path matches a query) and `index` (`FileIndex`, the fast search that
ranks exactly as scoring every path would). `cockpit.engine.file_search` keeps one index per
folder; the blocks a prompt carries for mentioned files are `cockpit.engine.mention_blocks`.
"""
