"""The socket `cockpit --remote` has ssh share its connection through: in the runtime
folder when its path fits a socket once ssh has filled it in, else in a short folder."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cockpit.paths import SOCKET_PATH_BYTES, ssh_control_path

HASH = "0" * 40
"""What ssh puts for `%C` (a SHA-1 in hex)."""

BIND_SUFFIX = ".0123456789abcdef"
"""What ssh adds to the name it binds before it renames it to the control path."""


@given(st.text(alphabet="abcdefghij/-", min_size=1, max_size=160))
def test_the_shared_ssh_connection_always_fits_a_socket(tail: str) -> None:
    home = f"/tmp/{tail}"
    path = ssh_control_path({"COCKPIT_HOME": home})
    bound = str(path).replace("%C", HASH) + BIND_SUFFIX
    assert len(os.fsencode(bound)) <= SOCKET_PATH_BYTES
    assert path.name == "ssh-%C"


def test_a_short_home_keeps_it_in_its_runtime_folder() -> None:
    assert ssh_control_path({"COCKPIT_HOME": "/srv/c"}) == Path("/srv/c/run/ssh-%C")
