"""`python -m cockpit` runs the command line."""

from cockpit.cli import main

raise SystemExit(main())
