"""The command line (`cockpit run`, `ls`, `show`, `agents`...), typed against the engine
contract in `cockpit.api`."""
