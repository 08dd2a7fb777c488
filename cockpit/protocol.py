"""The service's protocol: its version, and the contract's records and events as JSON.

Every value that crosses the socket between the service and a client is one of
`cockpit.api`'s types (or a plain JSON value). A dataclass travels as an object tagged with
its class name (`{"$": "Row", ...fields}`); a frame, the one value made per streamed token,
travels as a bare list in its field order, so that a 50 KB reply in 12,000 pieces costs no
field names. Decoding turns lists back into the tuples the annotations ask for, so a value
read from the wire equals the one written. Pure: no I/O, no engine, no Textual.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from cockpit import api
from store.model import Frame

PROTOCOL_VERSION = 9
"""Bumped whenever a method, a parameter or a record changes shape: a client and a service of
different versions refuse each other with a message that says so."""

TAG = "$"
"""The key that names a record's class on the wire."""

RECORDS: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        api.SessionRecord,
        api.Row,
        api.Page,
        api.PermissionRequest,
        api.Form,
        api.FormField,
        api.AgentSpec,
        api.AgentInfo,
        api.FileMatch,
        api.ModelCall,
        api.ModelCalls,
        api.Checkpoint,
        api.FileChange,
        api.RestorePlan,
        api.FramesEvent,
        api.StatusEvent,
        api.PermissionEvent,
        api.SessionEvent,
        api.AttentionEvent,
        api.ProblemEvent,
        api.SavingEvent,
        api.ResyncEvent,
        api.LinkEvent,
        api.ServiceStopped,
        api.WorktreeRequest,
        api.RepositoryInfo,
        api.ProjectInfo,
        api.Contender,
        api.WorktreeStatus,
        api.WorktreeListing,
        api.CleanupItem,
        api.MergeResult,
        api.Plan,
        api.PlanEntry,
        api.McpServerState,
        api.SignIn,
        api.SignInMethod,
    )
}
"""Every dataclass that may cross the wire, by the name that tags it."""

FRAME_FIELDS = Frame._fields

# -- methods ----------------------------------------------------------------------------------

HELLO = "cockpit/hello"
"""The first request of a client: `{protocol, client, environment}` -> `{protocol, version,
pid, client}`, and a STATE notification queued with the events. A client and a service of
different protocol versions say so and go no further. `environment` is the client's world
(`cockpit.environment.Environment.to_wire`), which the agents that this connection's
requests start run with; the first hello of a connection that brings one sets it for good.
A client reached over a link to another machine sends none: the far side's bridge puts its
own in."""
CALL = "cockpit/call"
"""A request of the contract: `{name, args}` -> `{result}`, `name` one of its calls (`CALLS`,
from `api.METHODS`) and `args` its arguments by name."""
WATCH = "cockpit/watch"
"""Notification: the sessions whose frames this client wants (the ones it shows)."""
SHOW = "cockpit/show"
"""Notification: the session this client has on screen (it is read there)."""
EVENT = "cockpit/event"
"""Notification to a client: one engine event."""
STATE = "cockpit/state"
"""Notification to a client, answering each hello: what it needs to answer the contract's
immediate questions. It goes out in order with the events (not in the hello's answer, which
the client takes a few loop turns after the events that follow it: an older state then
overwrote newer events, and a session stayed "working" for good)."""
RESYNC = "cockpit/resync"
"""Notification to a client: events were dropped (it could not keep up, or it reconnected):
what it holds may be stale, and it reads again what it shows."""
STOPPED = "cockpit/stopped"
"""Notification to a client: the service stops for good (an `api.ServiceStopped`, encoded),
so the client starts none by itself. A service stopped to be restarted, killed or crashed
says nothing: its clients attach again, starting the next one."""
STATUS = "service/status"
"""What the service runs: `{}` -> `{pid, version, protocol, started, clients, turns,
questions, unwritten: [messages, characters], sessions: [{id, title, status, questions,
unwritten}]}`. Needs no hello (see `cockpit.remote.launch`)."""
STOP = "service/stop"
"""Stop the service: `{restart}` -> `{lost: [messages, characters]}` once its agents have
stopped and its store is closed (their sessions resume on the next prompt), `lost` being
what it could not save. Unless `restart`, its clients are told it stopped for good."""
FULL = "service/full"
"""Notification to a connection the service turns away unread, before it closes it: `{message}`
(it serves as many clients as it may, and as many more wait for `status` and `stop`). A
client says the message; `status` and `stop` try again. A hello over the cap that is read
is refused with the same message (an error of type ServiceFull)."""

CALLS = frozenset(name for name, kind in api.METHODS.items() if kind is not api.CallKind.LOCAL)
"""The engine's methods a client may call through `cockpit/call`: the contract's calls
(`api.METHODS`), and nothing else of the engine's."""

READS = frozenset(name for name, kind in api.METHODS.items() if kind is api.CallKind.READ)
"""The calls that change nothing, sent again after a cut (`api.CallKind.READ`)."""

STARTS = frozenset(name for name, kind in api.METHODS.items() if kind is api.CallKind.START)
"""The calls that may start an agent, run with the client's environment
(`api.CallKind.START`)."""

ERROR_CODE = -32000
"""The JSON-RPC error code of an engine error; its data names the error's type."""


class ProtocolError(ValueError):
    """A value read from the wire is not one of the contract's."""


def encode(value: Any) -> Any:
    """`value` as JSON-ready data (dicts, lists, strings, numbers, booleans, None)."""
    kind = type(value)
    if kind is api.FramesEvent:  # one per batch of streamed tokens: the short way
        return encode_frames_event(value.session, value.frames)
    if kind is Frame:
        return _encode_frame(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data: dict[str, Any] = {TAG: type(value).__name__}
        for item in dataclasses.fields(value):
            data[item.name] = encode(getattr(value, item.name))
        return data
    if isinstance(value, Mapping):
        return {_escape(str(key)): encode(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [encode(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, os.PathLike):  # a file's path (where an export went) as its text
        return os.fsdecode(value)
    raise ProtocolError(f"{type(value).__name__} cannot cross the wire")


def encode_frames_event(session: str, frames: Sequence[Frame]) -> dict[str, Any]:
    """A FramesEvent of `session` with `frames`, encoded. The frames go as bare lists,
    each made without looking at what it holds field by field (every field but the
    payload is a str, an int or a bool already): a frame is the one value made per
    streamed token."""
    return {TAG: "FramesEvent", "session": session, "frames": [_encode_frame(f) for f in frames]}


def _encode_frame(frame: Frame) -> list[Any]:
    data = list(frame)
    if frame.payload is not None:
        data[-1] = encode(frame.payload)
    return data


def decode(data: Any, expected: Any = Any) -> Any:
    """The value `data` encodes; `expected` is the annotation it must meet (a list becomes
    a tuple where a tuple is expected, a list of 9 values a Frame where a Frame is)."""
    if expected is Frame:
        return _frame(data)
    if isinstance(data, dict) and TAG in data:
        if data[TAG] == "FramesEvent":
            return _frames_event(data)
        return _record(data)
    origin = typing.get_origin(expected)
    if origin in (types.UnionType, typing.Union):
        options = [option for option in typing.get_args(expected) if option is not type(None)]
        if data is None:
            return None
        if len(options) == 1:
            return decode(data, options[0])
        return decode(data, _best_option(data, options))
    if isinstance(data, list):
        if origin is tuple:
            arguments = typing.get_args(expected)
            item = arguments[0] if arguments else Any
            return tuple(decode(element, item) for element in data)
        if origin is list:
            (item,) = typing.get_args(expected) or (Any,)
            return [decode(element, item) for element in data]
        return [decode(element) for element in data]
    if isinstance(data, dict):
        return {_unescape(key): decode(item) for key, item in data.items()}
    return data


def _escape(key: str) -> str:
    """A plain mapping's key, with one more tag character in front when it starts with
    one: an agent's data (a payload, a command's input) may hold a `$` key, and must not
    read back as a record."""
    return TAG + key if key.startswith(TAG) else key


def _unescape(key: str) -> str:
    """The key `_escape` was given."""
    return key[1:] if key.startswith(TAG) else key


def _best_option(data: Any, options: list[Any]) -> Any:
    """Of a union's types, the one `data` most likely encodes."""
    for option in options:
        if option is Frame and isinstance(data, list):
            return option
        if typing.get_origin(option) is tuple and isinstance(data, list):
            return option
    return Any


def _frame(data: Any) -> Frame:
    if not isinstance(data, list) or len(data) != len(FRAME_FIELDS):
        raise ProtocolError(f"not a frame: {str(data)[:80]}")
    payload = data[-1]
    if payload is None:
        return Frame._make(data)
    return Frame._make([*data[:-1], decode(payload)])


_FRAMES_EVENT_FIELDS = frozenset({TAG, "session", "frames"})


def _frames_event(data: dict[str, Any]) -> api.FramesEvent:
    """A FramesEvent, the short way (see `encode_frames_event`)."""
    frames = data.get("frames")
    if data.keys() != _FRAMES_EVENT_FIELDS or not isinstance(frames, list):
        raise ProtocolError(f"not a FramesEvent: {str(data)[:80]}")
    return api.FramesEvent(data["session"], tuple(_frame(frame) for frame in frames))


def _record(data: dict[str, Any]) -> Any:
    cls = RECORDS.get(str(data[TAG]))
    if cls is None:
        raise ProtocolError(f"unknown record {data[TAG]!r}")
    hints = _hints(cls)
    unknown = set(data) - set(hints) - {TAG}
    if unknown:
        raise ProtocolError(f"a {cls.__name__} with fields it has not: {sorted(unknown)}")
    values = {}
    for name, hint in hints.items():
        if name in data:
            values[name] = decode(data[name], hint)
    try:
        return cls(**values)
    except TypeError as error:
        raise ProtocolError(f"a {cls.__name__} that does not fit: {error}") from error


def _hints(cls: type[Any]) -> dict[str, Any]:
    """The fields of a record and their annotations (resolved once per class)."""
    return _HINTS[cls.__name__]


def _resolve(cls: type[Any]) -> dict[str, Any]:
    names = {item.name for item in dataclasses.fields(cls) if item.init}
    hints = typing.get_type_hints(cls, vars(api) | {"Frame": Frame})
    return {name: hint for name, hint in hints.items() if name in names}


_HINTS = {name: _resolve(cls) for name, cls in RECORDS.items()}


# -- errors -----------------------------------------------------------------------------------


class RemoteError(RuntimeError):
    """An error the service met that has no type of its own on this side."""


SQLITE_FIELDS = ("sqlite_errorcode", "sqlite_errorname")
"""What a sqlite3 error raised by SQLite itself carries besides its message."""


def error_data(error: BaseException) -> dict[str, Any]:
    """What the client needs to raise the same error: its type's name, its message, and
    the fields some types carry (a session's id; an OSError's errno, meaning and files;
    SQLite's own error code)."""
    data: dict[str, Any] = {"type": type(error).__name__, "message": _message(error)}
    session = getattr(error, "session", None)
    if isinstance(session, str):
        data["session"] = session
    if isinstance(error, OSError):
        data.update(_os_fields(error))
    elif isinstance(error, sqlite3.Error | sqlite3.Warning):
        data["module"] = "sqlite3"
        for name in SQLITE_FIELDS:
            value = getattr(error, name, None)
            if isinstance(value, int | str):
                data[name] = value
    return data


def _os_fields(error: OSError) -> dict[str, Any]:
    """What an OSError carries besides its type: its number, its meaning and the files it
    names, those that hold something (a file given as bytes or a path-like travels as
    text). They cross so that the client's error is the service's: its errno, and a str()
    that says "Read-only file system" and the path, not "[Errno None] None"."""
    fields: dict[str, Any] = {}
    if isinstance(error.errno, int) and isinstance(error.strerror, str):
        fields["errno"], fields["strerror"] = error.errno, error.strerror
    for name in ("filename", "filename2"):
        value = getattr(error, name)
        if isinstance(value, int | str):
            fields[name] = value
        elif isinstance(value, bytes | os.PathLike):
            fields[name] = os.fsdecode(value)
    return fields


def _message(error: BaseException) -> str:
    if isinstance(error, KeyError) and error.args:  # str() of a KeyError adds quotes
        return str(error.args[0])
    return str(error)


def raised(data: Any) -> BaseException:
    """The error `error_data` describes, as this side's own type where it knows it (the
    ones the UI and the command line catch), else a RemoteError that says what it was."""
    if not isinstance(data, Mapping):
        return RemoteError(str(data))
    kind, message = str(data.get("type", "")), str(data.get("message", ""))
    session = str(data.get("session", ""))
    if kind in ("SessionBusy", "WriteConflict"):
        return api.SessionBusy(session, message)
    if kind == "UnknownSession":
        return api.UnknownSession(message)
    if kind == "StartError":
        return api.StartError(message)
    if kind == "NotSaved":
        return api.NotSaved(message)
    if kind in _OS_ERRORS or isinstance(data.get("errno"), int):
        return _os_error(_OS_ERRORS.get(kind, OSError), message, data)
    if kind in _PLAIN_ERRORS:
        return _PLAIN_ERRORS[kind](message)
    if data.get("module") == "sqlite3":
        return _sqlite_error(kind, message, data)
    return RemoteError(f"{kind}: {message}" if kind else message)


def _os_error(cls: type[OSError], message: str, data: Mapping[str, Any]) -> OSError:
    """An OSError of `cls` as the service had it: made from its errno, meaning and files
    when it had them (OSError itself then picks the subclass the errno stands for, as it
    does for the system's own errors), else from its message alone."""
    number, meaning = data.get("errno"), data.get("strerror")
    if not isinstance(number, int) or not isinstance(meaning, str):
        return cls(message)
    first, second = (data.get(name) for name in ("filename", "filename2"))
    if isinstance(second, int | str):  # OSError's fourth argument is Windows' own code
        return cls(number, meaning, first if isinstance(first, int | str) else None, None, second)
    if isinstance(first, int | str):
        return cls(number, meaning, first)
    return cls(number, meaning)


def _sqlite_error(kind: str, message: str, data: Mapping[str, Any]) -> Exception:
    """A sqlite3 error of the type the service met, with SQLite's own code and its name
    when SQLite gave them."""
    cls = getattr(sqlite3, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, sqlite3.Error | sqlite3.Warning)):
        cls = sqlite3.Error
    error: Exception = cls(message)
    for name in SQLITE_FIELDS:
        if isinstance(data.get(name), int | str):
            setattr(error, name, data[name])
    return error


_PLAIN_ERRORS: dict[str, type[Exception]] = {
    "KeyError": KeyError,
    "ValueError": ValueError,
    "FormValueError": ValueError,
    "TypeError": TypeError,
    "SchemaError": api.SchemaError,
}
_OS_ERRORS: dict[str, type[OSError]] = {
    cls.__name__: cls
    for cls in (
        OSError,
        BlockingIOError,
        ChildProcessError,
        ConnectionError,
        BrokenPipeError,
        ConnectionAbortedError,
        ConnectionRefusedError,
        ConnectionResetError,
        FileExistsError,
        FileNotFoundError,
        InterruptedError,
        IsADirectoryError,
        NotADirectoryError,
        PermissionError,
        ProcessLookupError,
        TimeoutError,
    )
}
"""The system's own OSError subclasses, by name: each comes back as itself."""
