"""`python -m cockpit` runs the command line."""

from cockpit.cli.main import main

raise SystemExit(main())
