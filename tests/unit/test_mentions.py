"""`@` mentions: the file index (git and walk), gitignore rules, fuzzy search, mention parsing
and the ACP blocks a prompt carries for mentioned files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp.schema import EmbeddedResourceContentBlock, ResourceContentBlock, TextResourceContents
from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.file_index import index as file_index
from cockpit.engine.file_index.gitignore import IgnoreRules, is_ignored
from cockpit.engine.file_index.index import FileIndex, Match
from cockpit.engine.mention_blocks import mention_blocks
from cockpit.text.mentions import Mention, completion_query, find_mentions, format_mention
from tests.support.checkout import tree_first

ROOT = Path(__file__).resolve().parents[2]


def write(root: Path, *paths: str, content: str = "x\n") -> None:
    for path in paths:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def no_git_above(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder git will not find a repository for, even if /tmp sits in one."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    tree = tmp_path / "tree"
    tree.mkdir()
    return tree


# -- gitignore rules --------------------------------------------------------------------------


def ignored(lines: list[str], path: str, is_dir: bool = False) -> bool:
    return is_ignored([IgnoreRules(lines)], path, is_dir)


def test_blank_lines_and_comments_are_not_patterns() -> None:
    rules = IgnoreRules(["", "   ", "# *.py", "\\#literal"])
    assert len(rules.rules) == 1
    assert not ignored(["# *.py"], "a.py")
    assert ignored(["\\#literal"], "#literal")


def test_pattern_without_slash_matches_at_any_depth() -> None:
    assert ignored(["*.log"], "debug.log")
    assert ignored(["*.log"], "deep/down/debug.log")
    assert ignored(["build"], "src/build", is_dir=True)
    assert not ignored(["*.log"], "debug.log.txt")


def test_negation_reincludes_and_last_match_wins() -> None:
    assert not ignored(["*.log", "!keep.log"], "keep.log")
    assert ignored(["*.log", "!keep.log"], "other.log")
    assert ignored(["!keep.log", "*.log"], "keep.log")
    assert ignored(["\\!bang"], "!bang")


def test_leading_or_inner_slash_anchors_to_the_gitignore_folder() -> None:
    assert ignored(["/build"], "build", is_dir=True)
    assert not ignored(["/build"], "src/build", is_dir=True)
    assert ignored(["doc/*.txt"], "doc/notes.txt")
    assert not ignored(["doc/*.txt"], "sub/doc/notes.txt")
    assert not ignored(["doc/*.txt"], "doc/deeper/notes.txt")


def test_trailing_slash_matches_folders_only() -> None:
    assert ignored(["out/"], "out", is_dir=True)
    assert not ignored(["out/"], "out", is_dir=False)
    assert ignored(["out/"], "src/out", is_dir=True)


def test_double_star() -> None:
    assert ignored(["**/cache"], "cache", is_dir=True)
    assert ignored(["**/cache"], "a/b/cache", is_dir=True)
    assert ignored(["docs/**"], "docs/a/b.md")
    assert not ignored(["docs/**"], "other/docs/b.md")
    assert ignored(["a/**/b"], "a/b")
    assert ignored(["a/**/b"], "a/x/y/b")
    assert not ignored(["a/**/b"], "a/x/c")
    assert ignored(["**/*.tmp"], "x/y/z.tmp")


def test_question_mark_classes_and_escapes() -> None:
    assert ignored(["file?.txt"], "file1.txt")
    assert not ignored(["file?.txt"], "file12.txt")
    assert ignored(["[ab].py"], "a.py")
    assert not ignored(["[ab].py"], "c.py")
    assert ignored(["[!ab].py"], "c.py")
    assert ignored(["[0-9].txt"], "7.txt")
    assert ignored(["\\*star"], "*star")
    assert not ignored(["\\*star"], "xstar")


def test_trailing_spaces_are_dropped_unless_escaped() -> None:
    assert ignored(["name   "], "name")
    assert ignored(["name\\ "], "name ")


def test_deeper_gitignore_overrides_and_only_applies_below_its_folder() -> None:
    rules = [IgnoreRules(["*.gen"]), IgnoreRules(["!keep.gen", "/local"], base="sub")]
    assert is_ignored(rules, "a.gen", False)
    assert not is_ignored(rules, "sub/keep.gen", False)
    assert is_ignored(rules, "keep.gen", False)
    assert is_ignored(rules, "sub/local", False)
    assert not is_ignored(rules, "local", False)
    assert not is_ignored(rules, "sub/x/local", False)


# -- building the index -----------------------------------------------------------------------


async def test_walk_applies_gitignore_files_and_skips_heavy_folders(no_git_above: Path) -> None:
    root = no_git_above
    write(
        root,
        "main.py",
        "debug.log",
        "keep.log",
        "build/out.js",
        "src/app.py",
        "src/gen/x.py",
        "src/sub/keep.gen",
        "src/sub/drop.gen",
        "node_modules/pkg/index.js",
        ".venv/lib/site.py",
        "pkg/__pycache__/m.pyc",
        ".git/config",
        ".hidden/ok.txt",
    )
    (root / ".gitignore").write_text("*.log\n!keep.log\n/build/\n*.gen\n")
    (root / "src" / ".gitignore").write_text("gen/\n")
    (root / "src" / "sub" / ".gitignore").write_text("!keep.gen\n")
    index = await FileIndex.build(root)
    assert index.source == "walk"
    assert not index.truncated
    assert index.paths == (
        ".gitignore",
        ".hidden/ok.txt",
        "keep.log",
        "main.py",
        "src/.gitignore",
        "src/app.py",
        "src/sub/.gitignore",
        "src/sub/keep.gen",
    )


async def test_walk_cannot_reinclude_a_file_inside_an_ignored_folder(no_git_above: Path) -> None:
    write(no_git_above, "logs/keep.txt", "logs/other.txt")
    (no_git_above / ".gitignore").write_text("logs/\n!logs/keep.txt\n")
    index = await FileIndex.build(no_git_above)
    assert index.paths == (".gitignore",)


async def test_git_work_tree_uses_ls_files(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "tracked.py", "gone.py", "untracked.py", "ignored.log", "sub/a.txt", "sub/b.tmp")
    write(root, "node_modules/kept/index.js")  # not ignored by the repo: git lists it
    (root / ".gitignore").write_text("*.log\n")
    (root / "sub" / ".gitignore").write_text("*.tmp\n")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    write(root, "excluded.txt")
    git(root, "add", "tracked.py", "gone.py")
    (root / "gone.py").unlink()  # tracked but deleted: not a file any more
    index = await FileIndex.build(root)
    assert index.source == "git"
    assert index.paths == (
        ".gitignore",
        "node_modules/kept/index.js",
        "sub/.gitignore",
        "sub/a.txt",
        "tracked.py",
        "untracked.py",
    )


async def test_git_skips_submodules_and_nested_repositories(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "a.py", "module/m.py", "nested/n.py")
    git(root / "module", "init", "-q")
    git(root / "module", "add", "m.py")
    git(root / "module", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m")
    git(root, "add", "a.py", "module")  # a gitlink entry: a folder, not a file
    git(root / "nested", "init", "-q")  # untracked nested repository: listed as "nested/"
    index = await FileIndex.build(root)
    assert index.paths == ("a.py",)


async def test_git_subfolder_root_lists_paths_relative_to_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "top.py", "pkg/mod.py", "pkg/deep/x.py")
    index = await FileIndex.build(root / "pkg")
    assert index.source == "git"
    assert index.paths == ("deep/x.py", "mod.py")


async def test_missing_git_falls_back_to_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "a.py", "b.log")
    (root / ".gitignore").write_text("*.log\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    index = await FileIndex.build(root)
    assert index.source == "walk"
    assert index.paths == (".gitignore", "a.py")


@pytest.mark.parametrize("mode", ["walk", "git untracked", "git tracked"])
async def test_symlinks_never_lead_out_of_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    outside = tmp_path / "outside"
    write(outside, "secret.txt", "dir/inner.txt")
    root = tmp_path / "root"
    write(root, "real.txt", "folder/f.txt")
    (root / "to_secret.txt").symlink_to(outside / "secret.txt")
    (root / "to_outside_dir").symlink_to(outside / "dir", target_is_directory=True)
    (root / "to_real.txt").symlink_to(root / "real.txt")
    (root / "to_folder").symlink_to(root / "folder", target_is_directory=True)
    (root / "dangling").symlink_to(root / "nowhere")
    if mode != "walk":
        git(root, "init", "-q")
    if mode == "git tracked":
        git(root, "add", "-A")
    index = await FileIndex.build(root)
    assert index.source == ("walk" if mode == "walk" else "git")
    assert index.paths == ("folder/f.txt", "real.txt", "to_real.txt")


async def test_cap_truncates_and_says_so(no_git_above: Path) -> None:
    write(no_git_above, *(f"f{i}.txt" for i in range(10)))
    index = await FileIndex.build(no_git_above, cap=4)
    assert index.truncated
    assert len(index) == 4
    assert not (await FileIndex.build(no_git_above, cap=10)).truncated
    git(no_git_above, "init", "-q")
    index = await FileIndex.build(no_git_above, cap=4)
    assert (index.source, index.truncated, index.paths) == ("git", True, index.paths[:4])
    assert index.paths == ("f0.txt", "f1.txt", "f2.txt", "f3.txt")
    assert not (await FileIndex.build(no_git_above, cap=10)).truncated


# -- search -----------------------------------------------------------------------------------


def index_of(*paths: str) -> FileIndex:
    return FileIndex.from_paths(Path("/root"), paths)


def ranked(index: FileIndex, query: str) -> list[str]:
    return [match.path for match in index.search(query)]


def test_file_name_match_beats_folder_match() -> None:
    index = index_of("main/other.txt", "src/main.py", "lib/main_window/x.py")
    assert ranked(index, "main")[0] == "src/main.py"
    assert ranked(index, "main")[-1] != "src/main.py"


def test_consecutive_beats_scattered() -> None:
    index = index_of("m_xa_xi_xn.py", "domain.py")
    assert ranked(index, "main") == ["domain.py", "m_xa_xi_xn.py"]
    # Within the folders too: one run at a word start beats the same letters spread out.
    index = index_of("conf/a.py", "c_o_n_f/a.py")
    assert ranked(index, "conf") == ["conf/a.py", "c_o_n_f/a.py"]


def test_exact_name_then_prefix_then_inside() -> None:
    index = index_of("lib/myapp.py", "lib/app_utils.py", "deep/er/app.py", "apricot_pie.py")
    assert ranked(index, "app") == [
        "deep/er/app.py",
        "lib/app_utils.py",
        "lib/myapp.py",
        "apricot_pie.py",
    ]


def test_word_starts_and_camel_humps_score() -> None:
    assert ranked(index_of("abus.py", "x_us.py"), "us") == ["x_us.py", "abus.py"]
    assert ranked(index_of("fabric.ts", "FooBar.ts"), "fb") == ["FooBar.ts", "fabric.ts"]


def test_shorter_path_wins_a_tie() -> None:
    index = index_of("a/b/c/d/main.py", "a/b/main.py")
    assert ranked(index, "main") == ["a/b/main.py", "a/b/c/d/main.py"]


def test_positions_point_at_the_matched_characters() -> None:
    index = index_of("src/main.py", "domain/main.py")
    matches = {match.path: match for match in index.search("main")}
    assert matches["src/main.py"].positions == (4, 5, 6, 7)
    assert matches["domain/main.py"].positions == (7, 8, 9, 10)  # the file name, not "domain"
    assert index.search("s/mpy")[0] == Match(
        "src/main.py", index.search("s/mpy")[0].score, (0, 3, 4, 9, 10)
    )


def test_smart_case() -> None:
    index = index_of("subtitle_btn.py", "Button.tsx")
    assert sorted(ranked(index, "btn")) == ["Button.tsx", "subtitle_btn.py"]
    assert ranked(index, "Btn") == ["Button.tsx"]
    assert ranked(index, "BTN") == []


def test_empty_query_lists_shallow_paths_first_and_limits() -> None:
    index = index_of("z.txt", "a/b/c.txt", "a/b.txt", "m.txt")
    assert [m.path for m in index.search("")] == ["m.txt", "z.txt", "a/b.txt", "a/b/c.txt"]
    assert [m.path for m in index.search("", limit=2)] == ["m.txt", "z.txt"]
    assert index.search("txt", limit=0) == []
    assert len(index.search("t", limit=3)) == 3


def test_no_match_and_empty_index() -> None:
    assert index_of("a.py").search("zz") == []
    assert index_of().search("a") == []
    assert index_of().search("") == []
    assert index_of("a\0b", "ok").paths == ("ok",)
    assert index_of("a.py").search("a\0") == index_of("a.py").search("a")


def test_typing_on_reuses_survivors_without_changing_results() -> None:
    paths = [f"pkg{i % 7}/mod_{i}/file{i}.py" for i in range(300)] + ["main.py", "m/a/i/n.py"]
    index = FileIndex.from_paths(Path("/r"), paths)
    fresh = {q: FileIndex.from_paths(Path("/r"), paths).search(q) for q in ("m", "ma", "mai")}
    for query in ("m", "ma", "mai", "ma", "mod1", "mod12"):
        expected = fresh.get(query) or FileIndex.from_paths(Path("/r"), paths).search(query)
        assert index.search(query) == expected


@pytest.mark.parametrize("bulk_tiers", [False, True])
def test_large_index_agrees_with_the_naive_scorer(
    monkeypatch: pytest.MonkeyPatch, bulk_tiers: bool
) -> None:
    monkeypatch.setattr(file_index, "MAX_SCORED", 10**9)  # exhaustive: pruning alone must agree
    if bulk_tiers:
        monkeypatch.setattr(file_index, "SMALL_SURVIVORS", 0)
    words = ["user", "main", "config", "test", "button", "api", "index", "util", "Service"]
    paths = [
        f"{words[i % 9]}s/{words[(i // 9) % 9]}_{words[(i // 81) % 9]}/{words[i % 7]}{i}.py"
        for i in range(3000)
    ]
    index = FileIndex.from_paths(Path("/r"), paths)
    for query in ("m", "us", "cfg", "test", "btn", "Svc", "u/m", "idx", "mainpy", "x", "sm/"):
        assert index.search(query) == index.naive_search(query), query


def test_scoring_budget_still_returns_valid_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_index, "MAX_SCORED", 3)
    index = index_of(*(f"d{i}/file{i}.py" for i in range(50)))
    results = index.search("dfpy", limit=10)
    assert len(results) == 3
    assert all(match.path.startswith("d") for match in results)


segment = st.text(alphabet="abcAB_-.x", min_size=1, max_size=6)
path_strategy = st.lists(segment, min_size=1, max_size=4).map("/".join)


@given(st.lists(path_strategy, min_size=1, max_size=25), st.text(alphabet="abAB_./x", max_size=4))
def test_search_equals_the_exhaustive_ranking(paths: list[str], query: str) -> None:
    index = FileIndex.from_paths(Path("/r"), paths)
    assert index.search(query, limit=5) == index.naive_search(query, limit=5)


@given(
    st.lists(st.text(min_size=1, max_size=20).filter(lambda s: "\0" not in s), max_size=20),
    st.text(min_size=1, max_size=5).filter(lambda s: "\0" not in s),
)
def test_results_hold_the_query_characters_in_order_at_the_positions(
    paths: list[str], query: str
) -> None:
    index = FileIndex.from_paths(Path("/r"), paths)
    for match in index.search(query, limit=50):
        assert len(match.positions) == len(query)
        assert list(match.positions) == sorted(set(match.positions))
        for char, position in zip(query, match.positions, strict=True):
            found = match.path[position]
            if char != char.lower():  # uppercase: only itself
                assert found == char
            else:
                assert found == char or found.lower() == char


# -- mentions in a prompt ---------------------------------------------------------------------


def test_find_mentions_at_start_after_space_and_punctuation() -> None:
    text = "@a.py see (@b/c.py), and @d.txt."
    assert find_mentions(text) == [
        Mention(0, 5, "a.py"),
        Mention(11, 18, "b/c.py"),
        Mention(25, 31, "d.txt"),
    ]
    assert [text[m.start : m.end] for m in find_mentions(text)] == ["@a.py", "@b/c.py", "@d.txt"]


def test_find_mentions_quoted_paths() -> None:
    text = 'look at @"my docs/read me.md" now'
    assert find_mentions(text) == [Mention(8, 29, "my docs/read me.md")]
    assert find_mentions('@"unterminated path') == []


def test_find_mentions_ignores_emails_and_bare_at() -> None:
    assert find_mentions("mail bob@example.com or first.last@x.org") == []
    assert find_mentions("a @ b, @\n") == []
    assert find_mentions("f(@x.py)") == [Mention(2, 7, "x.py")]
    assert find_mentions("keep (parens)@no but @fn(1).py") == [Mention(21, 30, "fn(1).py")]


def test_completion_query_and_format() -> None:
    assert completion_query("see @src/ma", 11) == Mention(4, 11, "src/ma")
    assert completion_query("see @", 5) == Mention(4, 5, "")
    assert completion_query('x @"my do', 9) == Mention(2, 9, "my do")
    assert completion_query("bob@exa", 7) is None
    assert completion_query("@done now", 9) is None
    assert format_mention("src/a.py") == "@src/a.py"
    assert format_mention("my docs/a.md") == '@"my docs/a.md"'
    assert find_mentions(format_mention("odd name.")) == [Mention(0, 12, "odd name.")]


# -- content blocks ---------------------------------------------------------------------------


def test_embedded_resources_when_the_agent_takes_them(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py", content="print('hi')\n")
    blocks, problems = mention_blocks("fix @src/app.py and @./src/app.py", tmp_path, True)
    assert problems == []
    assert len(blocks) == 1  # one block per distinct file
    block = blocks[0]
    assert isinstance(block, EmbeddedResourceContentBlock)
    assert isinstance(block.resource, TextResourceContents)
    assert block.resource.uri == (tmp_path / "src" / "app.py").as_uri()
    assert block.resource.uri.startswith("file:///")
    assert block.resource.text == "print('hi')\n"


def test_links_when_the_agent_does_not_embed(tmp_path: Path) -> None:
    write(tmp_path, "notes.md", content="# hi\n")
    blocks, problems = mention_blocks("@notes.md", tmp_path, False)
    assert problems == []
    [block] = blocks
    assert isinstance(block, ResourceContentBlock)
    assert block.name == "notes.md"
    assert block.uri == (tmp_path / "notes.md").as_uri()
    assert block.size == 5


def test_outside_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, "in.txt")
    write(tmp_path, "secret.txt")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    text = f"@../secret.txt @{tmp_path / 'secret.txt'} @link.txt @in.txt"
    blocks, problems = mention_blocks(text, root, True)
    assert len(blocks) == 1
    assert len(problems) == 3
    assert all("outside the session's folder" in problem for problem in problems)


def test_missing_file_and_folder_are_reported(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    blocks, problems = mention_blocks("@nope.py and @dir", tmp_path, True)
    assert blocks == []
    assert problems == [
        "@nope.py: no such file in the session's folder",
        "@dir: not a file",
    ]


def test_oversize_and_binary_files_become_links(tmp_path: Path) -> None:
    write(tmp_path, "big.txt", content="x" * 2000)
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    blocks, problems = mention_blocks("@big.txt @image.png", tmp_path, True, max_bytes=1000)
    assert [type(block) for block in blocks] == [ResourceContentBlock, ResourceContentBlock]
    assert "too large to embed" in problems[0]
    assert "binary" in problems[1]
    assert isinstance(blocks[1], ResourceContentBlock)
    assert blocks[1].mime_type == "image/png"
    # Linking was asked for anyway: nothing to report.
    assert mention_blocks("@big.txt @image.png", tmp_path, False, max_bytes=1000)[1] == []


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    [block], problems = mention_blocks("@latin.txt", tmp_path, True)
    assert problems == []
    assert isinstance(block, EmbeddedResourceContentBlock)
    assert isinstance(block.resource, TextResourceContents)
    assert block.resource.text == "caf\ufffd\n"


def test_engine_side_module_does_not_import_textual() -> None:
    code = (
        "import sys, cockpit.engine.file_index.index, cockpit.engine.mention_blocks;"
        " sys.exit('textual' in sys.modules)"
    )
    env = tree_first(os.environ)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=False)
    assert result.returncode == 0
