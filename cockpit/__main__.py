"""`python -m cockpit` runs the command line."""

from cockpit.cli.entry import main

raise SystemExit(main())
