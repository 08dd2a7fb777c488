"""The session engine: it spawns agents, speaks ACP through the SDK, folds what they send
into the store, serves their file and terminal requests under Cockpit's policy, and
tells its clients what changed. It never imports Textual; clients reach it only through
the contract in `cockpit.api`."""
