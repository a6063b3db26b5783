"""Children: every group's deadline stops its processes, from one shared thread."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from elelem_kernel.tools.children import Children

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


@pytest.mark.timeout(60)
def test_an_earlier_deadline_added_later_stops_its_group_alone() -> None:
    late, early = Children(30), Children(0.3)
    try:
        slow, quick = late.popen(SLEEP), early.popen(SLEEP)
        start = time.monotonic()
        assert quick.wait(timeout=20) != 0
        assert time.monotonic() - start < 10
        assert early.reason == "timeout"
        assert late.reason is None and slow.poll() is None
    finally:
        late.close()
        early.close()
    assert slow.poll() is not None


@pytest.mark.timeout(60)
def test_a_closed_group_is_not_stopped_later() -> None:
    group = Children(0.2)
    group.close()
    time.sleep(0.5)
    assert group.reason is None
    assert group.popen([sys.executable, "-c", "pass"]).wait(timeout=20) == 0
    group.close()


def test_groups_share_one_thread() -> None:
    groups = [Children(30) for _ in range(20)]
    try:
        names = [t.name for t in threading.enumerate()]
        assert names.count("elelem-deadlines") == 1
        assert not any(name.startswith("Thread-") and "Timer" in name for name in names)
    finally:
        for group in groups:
            group.close()


def test_a_group_without_a_timeout_has_no_deadline() -> None:
    with Children() as group:
        assert group.popen([sys.executable, "-c", "pass"], stdout=subprocess.DEVNULL).wait() == 0
    assert group.reason is None
