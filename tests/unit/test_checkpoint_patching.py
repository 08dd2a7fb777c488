"""The quick checkpoint tree's pure rules: reading what git prints, and patching a tree
with the paths that differ, checked against flat trees with any files turned into folders
and back (a fake `mktree` keeps what each tree holds)."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.checkpoints.patching import (
    TREE_MODE,
    Entry,
    folders_of,
    mktree_input,
    patch_trees,
    read_listing,
    read_stage,
    read_status,
    spare_copied,
)


def test_status_names_changed_untracked_and_gone_paths_and_skips_staged_ones() -> None:
    out = b" M a.txt\0?? new dir/x\0 D gone.txt\0M  staged.txt\0?? nested/\0MM both\0 T link\0"
    changed, gone = read_status(out) or ([], [])
    assert changed == [b"a.txt", b"new dir/x", b"nested", b"both", b"link"]
    assert gone == [b"gone.txt"]


def test_a_path_in_the_middle_of_a_merge_means_the_quick_tree_cannot_say() -> None:
    assert read_status(b" M a\0UU b\0") is None
    assert read_status(b"AA both-added\0") is None
    assert read_status(b"") == ([], [])


def test_copied_files_and_folders_are_spared() -> None:
    paths = [b".env", b".env.local", b"config", b"config/a", b"configs/b", b"src/.env"]
    assert spare_copied(paths, (".env", "config")) == [b".env.local", b"configs/b", b"src/.env"]


def test_stage_and_listing_are_read_as_git_prints_them() -> None:
    stage = b"100644 aaa 0\tx y.txt\x00120000 bbb 0\tlink\x00160000 ccc 0\tsub\0"
    assert read_stage(stage) == {
        b"x y.txt": (b"100644", b"blob", b"aaa"),
        b"link": (b"120000", b"blob", b"bbb"),
        b"sub": (b"160000", b"commit", b"ccc"),
    }
    listing = b"040000 tree t1\tsrc\x00100644 blob b1\tREADME\0\x00100644 blob b2\tsrc/a b\0"
    assert read_listing(listing) == {
        b"": {b"src": (TREE_MODE, b"tree", b"t1"), b"README": (b"100644", b"blob", b"b1")},
        b"src": {b"a b": (b"100644", b"blob", b"b2")},
    }


def test_mktree_input_is_one_tree_ended_by_an_empty_record() -> None:
    assert mktree_input({b"a b": (b"100644", b"blob", b"x")}) == b"100644 blob x\ta b\0\0"


@given(st.lists(st.sampled_from([b"a", b"a/b", b"a/b/c", b"d/e/f", b"d/g", b"h"]), max_size=6))
def test_folders_come_deepest_first_with_every_ancestor(paths: list[bytes]) -> None:
    folders = folders_of(paths)
    assert folders[-1] == b""
    for path in paths:
        parent = path.rpartition(b"/")[0]
        while parent:
            assert parent in folders
            assert folders.index(parent) < folders.index(parent.rpartition(b"/")[0])
            parent = parent.rpartition(b"/")[0]


NAMES = [b"a", b"a/b", b"a/b/c", b"a/d", b"e", b"e/f", b"e/f/g", b"h i", b"e/j"]


def _valid(paths: set[bytes]) -> set[bytes]:
    """Files only at the leaves: a path that is another's folder is dropped."""
    return {p for p in paths if not any(q.startswith(p + b"/") for q in paths)}


FLAT = st.dictionaries(st.sampled_from(NAMES), st.sampled_from([b"1", b"2", b"3"])).map(
    lambda found: {
        p: (b"100644", b"blob", oid) for p, oid in found.items() if p in _valid(set(found))
    }
)


class FakeGit:
    """Trees kept in memory: what `mktree` would store, and `ls-tree` read back."""

    def __init__(self) -> None:
        self.trees: dict[bytes, dict[bytes, Entry]] = {}

    async def name_tree(self, entries: dict[bytes, Entry]) -> bytes:
        tree = b"T%d" % len(self.trees)
        self.trees[tree] = dict(entries)
        return tree

    async def name_trees(self, trees: list[dict[bytes, Entry]]) -> list[bytes]:
        assert trees, "a call to name no tree"
        return [await self.name_tree(entries) for entries in trees]

    def build(self, flat: dict[bytes, Entry], prefix: bytes = b"") -> bytes:
        """The trees of a flat map of files, as git would make them."""
        entries: dict[bytes, Entry] = {}
        inside = prefix + b"/" if prefix else b""
        for path, entry in flat.items():
            if not path.startswith(inside):
                continue
            name, slash, _ = path[len(inside) :].partition(b"/")
            if not slash:
                entries[name] = entry
            elif name not in entries:
                entries[name] = (TREE_MODE, b"tree", self.build(flat, inside + name))
        return asyncio.run(self.name_tree(entries))

    def listing(self, tree: bytes, prefix: bytes = b"") -> dict[bytes, dict[bytes, Entry]]:
        found = {prefix: self.trees[tree]}
        for name, (mode, _, oid) in self.trees[tree].items():
            if mode == TREE_MODE:
                found.update(self.listing(oid, prefix + b"/" + name if prefix else name))
        return found

    def flatten(self, tree: bytes, prefix: bytes = b"") -> dict[bytes, Entry]:
        flat: dict[bytes, Entry] = {}
        for name, entry in self.trees[tree].items():
            path = prefix + b"/" + name if prefix else name
            if entry[0] == TREE_MODE:
                assert self.trees[entry[2]], "an empty folder was kept"
                flat.update(self.flatten(entry[2], path))
            else:
                flat[path] = entry
        return flat


@given(FLAT, FLAT, st.booleans())
def test_patching_the_paths_that_differ_gives_the_tree_of_the_files_now(
    before: dict[bytes, Entry], now: dict[bytes, Entry], descended: bool
) -> None:
    fake = FakeGit()
    base = fake.build(before)
    differ = sorted(p for p in before.keys() | now.keys() if before.get(p) != now.get(p))
    staged = {p: now[p] for p in differ if p in now}
    listing = fake.listing(base)
    if descended:  # as `ls-tree` lists a folder it is asked into: its children, not it
        asked = folders_of(differ)
        listing = {folder: {name: entry for name, entry in entries.items()
                            if (folder + b"/" + name if folder else name) not in asked}
                   for folder, entries in listing.items()}  # fmt: skip
    root = asyncio.run(patch_trees(differ, listing, staged, fake.name_trees))
    assert fake.flatten(root) == now
