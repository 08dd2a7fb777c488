"""Pure text rules every side shares (the engine, the TUI, the command line): what is safe
to show on a terminal, and rows written out as text. No I/O, no Textual, no SDK."""
