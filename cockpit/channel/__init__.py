"""What both ends of the service's connection share: its lines as the SDK's transport
(`transport.py`), who is at the other end of its socket (`peer.py`), and how a service
started in the background tells its client that it came up (`startup.py`). The service
(`cockpit.service`) and its clients (`cockpit.remote`) import this, never each other."""
