"""Shared test configuration: deterministic hypothesis, isolated stores, a garbage
collector tuned for a long-lived test process, a pilot that checks for idleness in short
windows, and bundled agents and services forked from a server that has imported them
(`tests/support/agent_forks.py`)."""

from __future__ import annotations

import compileall
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, is_hypothesis_test, settings

from cockpit.compat.textual_private import quicken_pilot_idle
from store.store import Store
from tests.support import agent_forks
from tests.support.checkout import tree_first
from tests.support.forked_cockpit import start_server
from tests.support.service_helpers import services_stopped
from tests.support.ui_service_helpers import ENGINES, Engines, engines_of

settings.register_profile(
    "cockpit",
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "explore", settings.get_profile("cockpit"), derandomize=False, database=None
)
"""The property tests with fresh examples, for CI's second run of them (`-m property` with
`--hypothesis-seed`): the default profile draws the same examples every run, so it never
finds what they miss. No example database, so the printed seed alone replays a failure."""
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "cockpit"))

os.environ.update(tree_first(os.environ))
"""Every process the tests start imports this tree's code, not another checkout's: the
agents an engine in the test process starts, the services, the servers that fork both,
and whatever a test starts with its own environment (`tests/support/checkout.py`)."""

quicken_pilot_idle()
"""Every `pilot.pause()` and key press waits until the app is idle, which Textual checks
in 20 ms sleeps: the UI tests slept twice as long as they worked. The same check in 2 ms
windows took the suite from about 190 s to about 160 s on 2 cores (BENCHMARKS.md)."""

WORKERS_PER_CORE = 2
"""Test processes per core for `pytest -n auto`: many tests spend their time waiting on agent
subprocesses or on the screen, so one process per core leaves the cores idle (on 2 cores,
4 processes ran the suite in about 4 minutes where 2 took over 5)."""


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many processes `-n auto` starts (pytest-xdist)."""
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    return WORKERS_PER_CORE * cores


PROJECT_ROOT = Path(__file__).resolve().parent.parent
COMPILED_FOLDERS = ("cockpit", "store", "acp", "tests")
"""The checkout's own code, which the suite's agent and command processes import."""


sys.dont_write_bytecode = False
"""pytest keeps each test module with its assertions rewritten in `__pycache__`, unless
Python may not write bytecode. Where PYTHONDONTWRITEBYTECODE is set, every test process
parsed and rewrote the ~90 test modules again: 2.7 of the 4 CPU seconds of each process's
collection. The suite writes these caches beside the sources, as it does compiled modules."""


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any test, in the main process only (pytest-xdist's workers start after it):
    compile the checkout's modules once, as pip does for what it installs (an editable
    install leaves them to their first import), and rewrite the test modules the run
    collects. Where PYTHONDONTWRITEBYTECODE is set, each of the suite's ~640 agent and
    command processes compiled the same modules again (about 0.1 s of CPU each); on a
    fresh checkout, each worker rewrote every test module."""
    if hasattr(session.config, "workerinput"):
        return
    for folder in COMPILED_FOLDERS:
        compileall.compile_dir(PROJECT_ROOT / folder, quiet=1)
    if getattr(session.config.option, "numprocesses", None):
        rewrite_test_modules(session.config)


def rewrite_test_modules(config: pytest.Config) -> None:
    """Import the test modules of the run's paths here once, so that pytest's assertion
    rewriter leaves them in its cache for the workers. A module that fails to import is
    left to the workers, whose collection reports it."""
    for arg in config.args:
        path = config.invocation_params.dir / arg.split("::")[0]
        files = sorted(path.rglob("test_*.py")) if path.is_dir() else [path]
        for file in files:
            if not file.name.startswith("test_") or file.suffix != ".py":
                continue
            with contextlib.suppress(Exception):  # outside the checkout, or broken
                parts = file.resolve().relative_to(PROJECT_ROOT).with_suffix("").parts
                importlib.import_module(".".join(parts))


FULL_COLLECTION_EVERY = 100
"""Collections of the middle generation between two full ones (CPython's default: 10)."""


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once every test module is imported, put what is alive (modules, classes, Textual's,
    Rich's and the SDKs' tables) out of the garbage collector's reach, as the app does at
    start (`freeze_startup_objects`), and make full collections rarer. A test process
    lives through hundreds of apps, and each full collection walks everything they left
    in the oldest generation: it was a quarter of the CPU of the UI tests. Tests that count
    what is alive call `gc.collect()` themselves, which still collects everything."""
    gc.collect()
    gc.freeze()
    first, middle, _ = gc.get_threshold()
    gc.set_threshold(first, middle, FULL_COLLECTION_EVERY)


TEST_SLOW_DELAY = 0.025
"""Seconds between the chunks of the demo agent's slow turn in tests (0.05 for a user):
still seconds long, so a test acts mid-stream, and the suite waits half as long for it."""


@pytest.fixture(scope="session", autouse=True)
def command_server() -> None:
    """The server that forks the tests' `cockpit` commands starts before any test sets its
    own COCKPIT_HOME: started inside a test, it would keep that test's home in its
    environment, and the test would count it among the processes left on its store."""
    start_server()


def pytest_configure(config: pytest.Config) -> None:
    """The suite's own markers."""
    config.addinivalue_line(
        "markers",
        "real_spawn: the test's bundled agents and services start as fresh interpreters,"
        " not as forks of the agent fork server (tests/support/agent_forks.py)",
    )
    config.addinivalue_line(
        "markers",
        "property: a hypothesis test (marked for you); `-m property` runs them all",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every hypothesis test `property`, so CI can run them alone with a fresh seed
    without a list of files to keep up to date."""
    for item in items:
        if isinstance(item, pytest.Function) and is_hypothesis_test(item.obj):
            item.add_marker(pytest.mark.property)


@pytest.fixture(scope="session")
def agent_fork_server() -> Iterator[agent_forks.Server]:
    """The server that forks this test process's bundled agents and services, started
    (like the command server) before any test sets its own environment."""
    agent_forks.route_through_forks()
    server = agent_forks.Server()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(autouse=True)
def bundled_agents_forked(
    request: pytest.FixtureRequest,
    agent_fork_server: agent_forks.Server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The test's bundled agents and detached services are forks of the agent fork server,
    unless it is marked `real_spawn` (or the system cannot fork them: not Linux). The
    variable also reaches the test's `cockpit` commands, which route theirs the same way."""
    if agent_forks.AVAILABLE and request.node.get_closest_marker("real_spawn") is None:
        monkeypatch.setenv(agent_forks.ENV, agent_fork_server.socket)
    else:
        monkeypatch.delenv(agent_forks.ENV, raising=False)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own COCKPIT_HOME: no test touches a user's real store. Commands
    run the engine in their own process (COCKPIT_LOCAL) unless a test of the service says
    otherwise; a service a test starts stops soon after its last client leaves."""
    home = tmp_path / "cockpit-home"
    monkeypatch.setenv("COCKPIT_HOME", str(home))
    monkeypatch.setenv("COCKPIT_LOCAL", "1")
    monkeypatch.setenv("COCKPIT_SERVICE_IDLE", "20")
    monkeypatch.setenv("COCKPIT_DEMO_SLOW_DELAY", str(TEST_SLOW_DELAY))
    return home


@pytest.fixture
def service_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's home, whose commands attach to its service (COCKPIT_LOCAL unset); no
    process of it survives the test."""
    monkeypatch.delenv("COCKPIT_LOCAL")
    isolated_home.mkdir(parents=True, exist_ok=True)
    with services_stopped(isolated_home):
        yield isolated_home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """An empty folder for the test's sessions to work in (`tmp_path/project`)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def cli_home(tmp_path: Path) -> Iterator[Path]:
    """A data folder (`tmp_path/home`, made) for the `cockpit` commands a test runs, in
    either mode: a service they start there is gone when the test ends."""
    home = tmp_path / "home"
    home.mkdir()
    with services_stopped(home):
        yield home


@pytest.fixture
def readme_project(tmp_path: Path) -> Path:
    """A project folder holding a README (`tmp_path/project`), for an agent to read."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# A project\n\nIt has a readme.\n")
    return folder


@pytest.fixture
def data_home(tmp_path: Path) -> Path:
    """A data folder (not made yet) for an engine the test opens itself, apart from the
    COCKPIT_HOME of its commands (`isolated_home`)."""
    return tmp_path / "home"


@pytest.fixture(params=ENGINES)
async def engines(
    request: pytest.FixtureRequest,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Engines]:
    """Apps on the test's home, against the engine of the parameter: in the test's
    process, or a service in a process of its own."""
    monkeypatch.delenv("COCKPIT_LOCAL", raising=False)
    async with engines_of(str(request.param), isolated_home, tmp_path / "project") as made:
        yield made


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """An open store in a fresh database file."""
    opened = await Store.open(tmp_path / "store" / "cockpit.db")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture(autouse=True)
def truecolour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs as in a truecolour terminal, whatever terminal runs the suite: the
    app picks its theme by the terminal's colours (a test of that sets TERM and COLORTERM
    itself)."""
    monkeypatch.setenv("COLORTERM", "truecolor")
