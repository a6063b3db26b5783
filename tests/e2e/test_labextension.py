"""The JupyterLab extension ships in the wheel: `pip install` alone makes Lab load it.

Builds the wheel from this tree (the extension must have been built first, by
scripts/setup.sh or scripts/build_labextension.sh), installs it into a private prefix and
asks `jupyter labextension list`, the way a person would check.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "elelem_kernel" / "labextension" / "package.json"

pytestmark = pytest.mark.skipif(
    not BUILT.is_file() and not os.environ.get("CI"),
    reason="the JupyterLab extension is not built: run `bash scripts/build_labextension.sh`",
)


def labextensions(prefix: Path, tmp_path: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env.update(
        HOME=str(tmp_path / "home"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_PATH=str(prefix / "share" / "jupyter"),
    )
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout + listed.stderr


def test_the_wheel_installs_the_extension_enabled(tmp_path):
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    wheels = tmp_path / "wheels"
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(REPO)],
        check=True,
        capture_output=True,
    )
    [wheel] = wheels.glob("elelem_kernel-*.whl")
    prefix = tmp_path / "prefix"
    subprocess.run(
        # --ignore-installed: without it pip uninstalls the running environment's own copy
        [*pip, "install", "--no-deps", "--ignore-installed", "--prefix", str(prefix), str(wheel)],
        check=True,
        capture_output=True,
    )
    assert (prefix / "share/jupyter/labextensions/elelem-kernel/package.json").is_file()
    listed = labextensions(prefix, tmp_path)
    line = next(line for line in listed.splitlines() if "elelem-kernel" in line)
    assert "enabled" in line and "OK" in line, listed
