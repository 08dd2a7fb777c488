"""The client side of the service: finding (and starting) the service of a store,
`RemoteEngine`, the contract (`cockpit.api.EngineAPI`) implemented over its socket, and the
bridge of `cockpit service --stdio`, a client that relays another machine's. Nothing here
imports the engine or the service (what both ends share is `cockpit.channel`): a TUI
attached this way holds no agent and no database."""
