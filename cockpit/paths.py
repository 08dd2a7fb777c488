"""Where Cockpit keeps its files, and where the files it ships are: every path Cockpit
uses is named here.

`COCKPIT_HOME` relocates everything Cockpit owns (the store, logs, its config), which is
how tests and users isolate one setup from another; otherwise the platform's user data
and config folders are used. The bundled agents (`acp/`) and themes (`themes/`) sit
beside the `cockpit` package in a source checkout; an installed wheel carries them inside
it as `cockpit/bundled/` (a top-level `acp` folder would shadow the SDK). The folders
Cockpit makes or uses are the user's own and owner-only (`private_dir`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import pwd
import stat
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

import platformdirs

APP_NAME = "cockpit"
DATABASE_NAME = "cockpit.db"
SETTINGS_NAME = "settings.json"
_PACKAGE = Path(__file__).resolve().parent


def bundled_dir(name: str) -> Path:
    """The bundled folder `name` ("acp" or "themes")."""
    inside = _PACKAGE / "bundled" / name
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / name


def agents_dir() -> Path:
    """The folder of the bundled ACP agents and their registry."""
    return bundled_dir("acp")


def _env(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The folder holding the store and logs: `$COCKPIT_HOME`, else the user data folder."""
    home = _env(environ).get("COCKPIT_HOME")
    if home:
        return Path(home).expanduser()
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The folder holding the user's `agents.toml` and themes: `$COCKPIT_HOME/config` when
    COCKPIT_HOME is set, else the user config folder."""
    home = _env(environ).get("COCKPIT_HOME")
    if home:
        return Path(home).expanduser() / "config"
    return platformdirs.user_config_path(APP_NAME, appauthor=False)


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The folder for what lives only while Cockpit runs (the service's socket):
    `$COCKPIT_HOME/run` when COCKPIT_HOME is set, else the user runtime folder
    (`$XDG_RUNTIME_DIR/cockpit`), else, where the system has none (a container, some SSH
    logins), `run/` in the data folder."""
    home = _env(environ).get("COCKPIT_HOME")
    if home:
        return Path(home).expanduser() / "run"
    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs guesses /run/user/UID
        warnings.simplefilter("ignore")
        path = platformdirs.user_runtime_path(APP_NAME, appauthor=False)
    if path.parent.is_dir() and os.access(path.parent, os.W_OK):
        return path
    return data_dir(environ) / "run"


def own_folders(data: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders that are Cockpit's and never an agent's: the store and logs in `data`,
    the config (agents, policy, themes) and the runtime folder. An agent that could
    write them could rewrite the policy that judges it, or the store itself."""
    found: list[Path] = []
    for folder in (data, config_dir(environ), runtime_dir(environ)):
        if folder not in found:
            found.append(folder)
    return tuple(found)


def database_path(environ: Mapping[str, str] | None = None) -> Path:
    """The store's SQLite file."""
    return data_dir(environ) / DATABASE_NAME


def settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """The interface's settings (the theme, notifications, the session to reopen on):
    `settings.json` in Cockpit's config folder."""
    return config_dir(environ) / SETTINGS_NAME


FULL_OR_READ_ONLY = frozenset({errno.EROFS, errno.ENOSPC, errno.EDQUOT})
"""What the system says when a file cannot be written whoever asks."""


class ForeignFolder(PermissionError):
    """A folder Cockpit would make or use is a symbolic link, or belongs to another user:
    nothing of Cockpit's goes in it. In a shared temporary folder another user may plant
    either, to have Cockpit open up their target or bind its socket where they can reach
    it."""


def owner_name(uid: int) -> str:
    """A user in words: their name and uid, or the uid alone when the system has no name
    for it."""
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def private_dir(path: Path, *, follow: bool = True) -> Path:
    """Create `path` owner-only (0700) if missing, or make the user's own folder
    owner-only if others may read it (a `COCKPIT_HOME` made with the usual 0755 let every
    user of the machine read the transcripts); return it. The mode is changed through the
    folder's open descriptor, never through its path, which could be swapped meanwhile.

    A folder of another user is refused (ForeignFolder, naming it and its owner). Not
    `follow`: a symbolic link is refused too, whoever owns it and wherever it leads: so
    are the runtime folders (the socket's, including its fallback under the temporary
    folder, and ssh's control folder), whose names others can guess and plant first.
    `follow` (the data and config folders): a link the user made to a folder of theirs
    elsewhere (another disk, a dotfiles checkout) is followed, and what it leads to must
    be theirs. Only the last part of the path is checked: the folders above it are the
    user's choice (TMPDIR, COCKPIT_HOME)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    flags = os.O_RDONLY | os.O_DIRECTORY | (0 if follow else os.O_NOFOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:  # a link, or a folder this user may not even open: whose?
        refused = _refusal(path, follow)
        if refused is not None:
            raise refused from error
        raise
    try:
        status = os.fstat(descriptor)
        if status.st_uid != os.getuid():
            raise ForeignFolder(_not_yours(path, f"belongs to {owner_name(status.st_uid)}"))
        if status.st_mode & 0o077:
            os.fchmod(descriptor, stat.S_IMODE(status.st_mode) & 0o700)
    finally:
        os.close(descriptor)
    return path


def _refusal(path: Path, follow: bool) -> ForeignFolder | None:
    """Why `path`, which could not be opened as a folder, is refused: a link (when links
    are not followed) or another user's folder; None when neither (not a folder at all)."""
    try:
        status = os.lstat(path)
        if stat.S_ISLNK(status.st_mode) and not follow:
            return ForeignFolder(
                _not_yours(path, f"is a symbolic link owned by {owner_name(status.st_uid)}")
            )
        if follow:
            status = os.stat(path)
    except OSError:
        return None
    if status.st_uid != os.getuid():
        return ForeignFolder(_not_yours(path, f"belongs to {owner_name(status.st_uid)}"))
    return None


def _not_yours(path: Path, what: str) -> str:
    return (
        f"{path} {what}, not a folder of yours: Cockpit will not use it (remove it, or"
        " point TMPDIR or COCKPIT_HOME to a folder of your own)"
    )


SOCKET_PATH_BYTES = 100
"""The longest socket path used as is: `sun_path` takes 107 bytes on Linux, 103 on macOS."""


def service_socket(data: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The Unix socket of the service that owns the store in `data`: one per store, in the
    runtime folder, named after the store's real path. A path too long for the kernel
    (a deep COCKPIT_HOME) moves to a short owner-only folder under the temporary folder."""
    digest = hashlib.sha256(os.path.realpath(data).encode()).hexdigest()[:16]
    return socket_path(f"service-{digest}.sock", environ)


def socket_path(name: str, environ: Mapping[str, str] | None = None, spare: int = 0) -> Path:
    """A socket named `name` in the runtime folder, or in a short owner-only folder under
    the temporary folder when that path, `spare` bytes longer, would not fit a socket."""
    path = runtime_dir(environ) / name
    if len(os.fsencode(path)) + spare <= SOCKET_PATH_BYTES:
        return path
    return Path(tempfile.gettempdir()) / f"cockpit-{os.getuid()}" / name


SSH_CONTROL_NAME = "ssh-%C"
"""The socket `--remote`'s ssh shares one connection through; ssh puts a hash of the
host, port and user (40 hex digits) for `%C`."""

SSH_CONTROL_SPARE = 40 - len("%C") + 17
"""What ssh adds to the path: the hash for `%C`, and a suffix of 17 bytes on the name it
binds before it renames it."""


def ssh_control_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the ssh of `cockpit --remote` keeps the connection its later runs share (in
    the runtime folder; where that path is too long for a socket, in a short owner-only
    folder under the temporary folder, as `service_socket`)."""
    return socket_path(SSH_CONTROL_NAME, environ, spare=SSH_CONTROL_SPARE)


def service_lock(data: Path) -> Path:
    """The lock the service of the store in `data` holds while it runs: one service per store."""
    return data / "service.lock"


def service_log(data: Path) -> Path:
    """Where a service started in the background writes its output (it has no terminal)."""
    return data / "logs" / "service.log"
