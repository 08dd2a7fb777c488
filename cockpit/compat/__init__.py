"""Every use Cockpit makes of a library's private internals, one module per library, each
with a test that fails loudly, saying what changed, when the library's version moves."""
