"""The client side of the service: finding (and starting) the service of a store, and
`RemoteEngine`, the contract (`cockpit.api.EngineAPI`) implemented over its socket. Nothing
here imports the engine: a TUI attached this way holds no agent and no database."""
