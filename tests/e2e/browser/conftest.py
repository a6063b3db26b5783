"""Fixtures for the browser tests: one JupyterLab and one Chromium for the whole session.

The server runs in a private Jupyter world (tests/e2e/browser/lab.py) on a copy of
notebooks/ plus a few scenario notebooks, with the demo as default provider and the
`openai` provider pointed at a loopback wire server the tests script. Without Chromium
(or the playwright package) every browser test is skipped, saying what to install; with
CI or ELELEM_REQUIRE_BROWSER set, that is a failure instead.

Under pytest-xdist "session" means one worker's share: each worker has its own server,
world, wire server and Chromium, on free ports and in its own tmp dirs. They share only
test-artifacts/browser/, emptied once per run by the first worker to get there.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.browser.lab import ARTIFACTS, LabServer, copy_notebooks, jupyter_env
from tests.e2e.browser.pages import Lab

#: Debian's chromium-headless-shell: the same Blink as the chromium package, without the
#: desktop browser's display compositor, so a JupyterLab page costs about a third less CPU
#: (the suite is CPU-bound on two cores). Debian's chromium where the shell is missing.
CHROMIUM = os.environ.get("ELELEM_CHROMIUM") or next(
    (
        path
        for path in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
        if Path(path).exists()
    ),
    "/usr/bin/chromium-headless-shell",
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = ARTIFACTS / "browser"
RUN = ".run"  # in SHOTS: the id of the test run that emptied it
#: Slow enough that the live view shows several states, fast enough for a short suite.
DEMO_DELAY = "0.02"


@pytest.fixture(scope="session")
def chromium() -> str:
    """Chromium's path; skip (fail where a browser is required, as in CI) when it is missing."""
    required = os.environ.get("ELELEM_REQUIRE_BROWSER") or os.environ.get("CI")
    missing = None
    if not Path(CHROMIUM).exists():
        missing = (
            f"browser tests need Chromium at {CHROMIUM}: `apt-get install "
            "chromium-headless-shell` (scripts/setup.sh test does it as root) or set "
            "ELELEM_CHROMIUM"
        )
    elif importlib.util.find_spec("playwright") is None:
        missing = "browser tests need the playwright package: `pip install -e .[test]`"
    if missing and required:
        pytest.fail(f"{missing} (required here: CI or ELELEM_REQUIRE_BROWSER is set)")
    if missing:
        pytest.skip(missing)
    return CHROMIUM


@pytest.fixture(scope="session")
def wire() -> Iterator[object]:
    """A loopback OpenAI-format server for the tests that need a scripted model."""
    from tests.wire_servers import WireServer

    with WireServer() as server:
        yield server


@pytest.fixture(autouse=True)
def no_leftover_replies(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, drop the replies it queued on the worker's wire server and did not
    use: a test that fails midway must not answer the next test's prompts."""
    yield
    if "wire" in request.fixturenames:
        request.getfixturevalue("wire").clear()


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder JupyterLab serves: notebooks/ copied, outside any git repository."""
    return copy_notebooks(tmp_path_factory.mktemp("lab") / "root")


@pytest.fixture(scope="module")
def ext_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder for the servers a module starts of its own (test_restore_*.py)."""
    return tmp_path_factory.mktemp("ext-root")


@pytest.fixture(scope="session")
def shots(chromium: str, request: pytest.FixtureRequest) -> Iterator[Path]:
    """test-artifacts/browser/, emptied once per run; index.html shows them all after.

    Parallel workers share it: the first to get here empties it (the others find the run's
    id in it), and each rewrites index.html as it ends, so the last one lists every shot.
    """
    worker = getattr(request.config, "workerinput", None)
    run = worker["testrunuid"] if worker else uuid.uuid4().hex
    with shots_lock():
        if not (SHOTS / RUN).is_file() or (SHOTS / RUN).read_text() != run:
            shutil.rmtree(SHOTS, ignore_errors=True)
            SHOTS.mkdir(parents=True)
            (SHOTS / RUN).write_text(run)
    yield SHOTS
    with shots_lock():
        write_index(SHOTS)


@contextmanager
def shots_lock() -> Iterator[None]:
    """Hold test-artifacts/.browser.lock: one worker at a time empties or indexes SHOTS."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with (ARTIFACTS / ".browser.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def write_index(shots: Path) -> None:
    """index.html in `shots`: every screenshot there, by name."""
    figures = "".join(
        f'<figure><figcaption>{png.stem}</figcaption><img src="{png.name}"></figure>'
        for png in sorted(shots.glob("*.png"))
    )
    (shots / "index.html").write_text(
        "<!doctype html><meta charset=utf-8><title>elelem browser tests</title>"
        "<style>figure{margin:1em 0;border-top:1px solid #ccc}img{max-width:100%}</style>"
        f"<h1>What the browser tests saw</h1>{figures}"
    )


@pytest.fixture(scope="session")
def lab(shots: Path, wire: object, lab_root: Path, tmp_path_factory) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1 with a token, for the whole session (one per xdist worker)."""
    base = tmp_path_factory.mktemp("jupyter")
    env = jupyter_env(base, ELELEM_DEMO_DELAY=DEMO_DELAY, **wire.env("openai"))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    log = shots / (f"jupyterlab-{worker}.log" if worker else "jupyterlab.log")
    server = LabServer(lab_root, env, log).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser(chromium: str) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, lab: LabServer, shots: Path, request: pytest.FixtureRequest) -> Iterator[Lab]:
    """A fresh browser context on the session's JupyterLab; kernels stop afterwards."""
    lab_page = Lab.in_new_context(browser, lab, shots)
    yield lab_page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        lab_page.shot(f"{request.node.name}-FAILED")
    lab_page.page.context.close()
    lab.shutdown_kernels()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so `page` can screenshot failures."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
