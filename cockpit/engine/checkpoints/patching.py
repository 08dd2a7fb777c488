"""Pure rules for a checkpoint's quick tree: the tree of the agent's index, patched with
only the paths `git status` says differ from it.

Staging every file again (`git add -A`) walks the whole work tree and writes a whole
index twice. Git's untracked cache lets `status` skip most of that walk, and the paths it
lists are few: their entries are made by git (`update-index` into a tiny index, so modes,
links, submodules and filters are git's own), and only the folders that hold them get a
new tree (`mktree`). No I/O here: paths are bytes, as git prints them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping

Entry = tuple[bytes, bytes, bytes]
"""A tree entry: its mode, its type (blob, tree, commit) and its object id."""

TREE_MODE = b"040000"

UNMERGED = frozenset({b"DD", b"AU", b"UD", b"UA", b"DU", b"AA", b"UU"})
"""The status letters of a path in the middle of a merge: the quick tree leaves those to
`git add -A`, which settles them the same way every time."""


def read_status(out: bytes) -> tuple[list[bytes], list[bytes]] | None:
    """The paths whose files differ from the index, from `git status --porcelain -z
    --no-renames`: those changed or untracked (an untracked repository's trailing slash
    dropped), and those gone. None when a path is unmerged."""
    changed: list[bytes] = []
    gone: list[bytes] = []
    for record in out.split(b"\0"):
        if len(record) < 4:
            continue
        letters, path = record[:2], record[3:]
        if letters in UNMERGED:
            return None
        if letters[1:2] == b"D":
            gone.append(path)
        elif letters[1:2] != b" ":  # "M " alone: staged, and the file is as the index has it
            changed.append(path.rstrip(b"/"))
    return changed, gone


def spare_copied(paths: Iterable[bytes], copied: Iterable[str]) -> list[bytes]:
    """The paths that are not one of the files copied in from the user's checkout (nor
    inside a copied folder): those are never checkpointed."""
    kept = [c.encode() for c in copied]
    return [p for p in paths if not any(p == c or p.startswith(c + b"/") for c in kept)]


def read_stage(out: bytes) -> dict[bytes, Entry]:
    """Each path's entry, from `git ls-files --stage -z` (`MODE OID STAGE<TAB>PATH`)."""
    found: dict[bytes, Entry] = {}
    for record in out.split(b"\0"):
        head, tab, path = record.partition(b"\t")
        if not tab:
            continue
        mode, oid = head.split(b" ")[:2]
        found[path] = (mode, _kind(mode), oid)
    return found


def read_listing(out: bytes) -> dict[bytes, dict[bytes, Entry]]:
    """The entries of each folder, from `git ls-tree -z` (`MODE TYPE OID<TAB>PATH`); the
    top folder is `b""`."""
    folders: dict[bytes, dict[bytes, Entry]] = {}
    for record in out.split(b"\0"):
        head, tab, path = record.partition(b"\t")
        if not tab:
            continue
        mode, kind, oid = head.split(b" ")[:3]
        folder, _, name = path.rpartition(b"/")
        folders.setdefault(folder, {})[name] = (mode, kind, oid)
    return folders


def folders_of(paths: Iterable[bytes]) -> list[bytes]:
    """Every folder that holds one of `paths`, deepest first (the top folder, `b""`, last):
    the order their trees must be made in, since a folder's tree names its folders'."""
    found = {b""}
    for path in paths:
        folder = path.rpartition(b"/")[0]
        while folder and folder not in found:
            found.add(folder)
            folder = folder.rpartition(b"/")[0]
    return sorted(found, key=lambda folder: (-_depth(folder), folder))


def patched(
    base: Mapping[bytes, Entry],
    files: Mapping[bytes, Entry | None],
    folders: Mapping[bytes, bytes | None],
) -> dict[bytes, Entry]:
    """The entries of a folder now: its entries in the index's tree (`base`), with each
    of its `files` set to its entry now (or removed when it has none: the file is gone),
    then each of its `folders` set to its new tree (or removed when it is left empty and
    the entry is a folder: a file may have taken its name)."""
    entries = dict(base)
    for name, entry in files.items():
        if entry is not None:
            entries[name] = entry
        else:
            entries.pop(name, None)
    for name, tree in folders.items():
        if tree is not None:
            entries[name] = (TREE_MODE, b"tree", tree)
        elif name in entries and entries[name][0] == TREE_MODE:
            del entries[name]
    return entries


async def patch_trees(
    paths: list[bytes],
    listing: Mapping[bytes, Mapping[bytes, Entry]],
    staged: Mapping[bytes, Entry],
    name_trees: Callable[[list[dict[bytes, Entry]]], Awaitable[list[bytes]]],
) -> bytes:
    """The id of the top tree with `paths` patched in (each set as `staged` has it, or
    gone): each folder that holds one gets its `patched` entries, a depth at a time from
    the deepest, named together by `name_trees` (git's `mktree`); a folder left empty is
    dropped, as git keeps none."""
    files: dict[bytes, dict[bytes, Entry | None]] = {}
    for path in paths:
        folder, _, name = path.rpartition(b"/")
        files.setdefault(folder, {})[name] = staged.get(path)
    made: dict[bytes, dict[bytes, bytes | None]] = {}
    for group in _by_depth(folders_of(paths)):
        entries = {f: patched(listing.get(f, {}), files.get(f, {}), made.get(f, {})) for f in group}
        if group == [b""]:
            return (await name_trees([entries[b""]]))[0]
        kept = [folder for folder in group if entries[folder]]
        ids = await name_trees([entries[folder] for folder in kept]) if kept else []
        named = dict(zip(kept, ids, strict=True))
        for folder in group:
            parent, _, name = folder.rpartition(b"/")
            made.setdefault(parent, {})[name] = named.get(folder)
    raise AssertionError("folders_of always ends with the top folder")


def _by_depth(folders: list[bytes]) -> list[list[bytes]]:
    """Folders (deepest first) in groups of one depth: a group's trees can be named
    together once the deeper groups' are."""
    groups: list[list[bytes]] = []
    for folder in folders:
        if groups and _depth(groups[-1][0]) == _depth(folder):
            groups[-1].append(folder)
        else:
            groups.append([folder])
    return groups


def mktree_input(entries: Mapping[bytes, Entry]) -> bytes:
    """One tree for `git mktree -z --batch`, ended by its empty line (git sorts it)."""
    lines = b"".join(
        b"%s %s %s\t%s\0" % (mode, kind, oid, name) for name, (mode, kind, oid) in entries.items()
    )
    return lines + b"\0"


def _depth(folder: bytes) -> int:
    return folder.count(b"/") + 1 if folder else 0


def _kind(mode: bytes) -> bytes:
    if mode == b"160000":
        return b"commit"
    return b"tree" if mode == TREE_MODE else b"blob"
