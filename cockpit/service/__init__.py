"""The Cockpit service: the engine in a process of its own that outlives the terminal. It owns
the agents and the store of one data folder; TUIs and commands attach to it over a Unix
socket (owner-only, the peer's uid checked) or through `cockpit service --stdio` over ssh,
speaking JSON-RPC through the ACP SDK's generic connection (`cockpit.protocol`). It imports
nothing of its clients (`cockpit.remote`): what both ends share is `cockpit.channel`."""
