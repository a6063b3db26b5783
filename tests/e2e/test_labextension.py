"""The JupyterLab extension ships in the wheel: `pip install` alone makes Lab load it.

The wheel's build hook (hatch-jupyter-builder, pyproject.toml) builds labextension/ with
npm when the built extension is missing, as in a clean checkout; where it is built already
the hook must not need node at all, and an editable install must work without node. Each
wheel is installed into a private prefix and `jupyter labextension list` is asked, the way
a person would check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

# the clean tree runs npm and webpack: minutes on a loaded machine
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "elelem_kernel" / "labextension" / "package.json"
NODE_MODULES = REPO / "labextension" / "node_modules"
VENV_BIN = str(Path(sys.executable).parent)
SHARED = "share/jupyter/labextensions/elelem-kernel/package.json"
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]

needs_node = pytest.mark.skipif(
    not (shutil.which("node") and shutil.which("npm")) and not os.environ.get("CI"),
    reason="node and npm build the JupyterLab extension",
)

needs_built = pytest.mark.skipif(
    not BUILT.is_file() and not os.environ.get("CI"),
    reason="the JupyterLab extension is not built: run `bash scripts/build_labextension.sh`",
)


def clean_copy(dest: Path) -> Path:
    """The source tree as a fresh clone has it: tracked files and new ones git would add."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = REPO / os.fsdecode(name)
        if source.is_file():
            (dest / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / os.fsdecode(name))
    return dest


def with_node_modules(source: Path) -> Path:
    """`source` with this tree's labextension/node_modules, so npm install downloads
    nothing. Hard links, not a symlink: npm replaces a symlinked node_modules and installs
    all 446 packages again (40 CPU-s); linking the 26,000 files takes about 2."""
    if NODE_MODULES.is_dir():
        target = source / "labextension" / "node_modules"
        shutil.copytree(NODE_MODULES, target, copy_function=link_or_copy, symlinks=True)
        lock = target / ".package-lock.json"  # npm rewrites it in place: a copy of its own
        if lock.is_file():
            lock.unlink()
            shutil.copy2(NODE_MODULES / lock.name, lock)
    return source


def link_or_copy(source: str, target: str) -> None:
    """A hard link to `source` at `target`, or a copy across file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def built_copy(dest: Path) -> Path:
    """A clean copy with this tree's built extension in it, as after a first build (and
    node_modules beside it, which the sdist must leave out)."""
    shutil.copytree(BUILT.parent, clean_copy(dest) / "elelem_kernel" / "labextension")
    if NODE_MODULES.is_dir():
        (dest / "labextension" / "node_modules").symlink_to(NODE_MODULES)
    return dest


def build(argv: list[str], out: Path, path: str, cwd: Path | None = None) -> Path:
    """Run a build command with `path` as PATH; the one distribution it wrote into `out`."""
    made = subprocess.run(
        argv, cwd=cwd, env={**os.environ, "PATH": path}, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stdout + made.stderr
    [built] = out.glob("elelem_kernel-*")
    return built


def build_wheel(source: Path, out: Path, path: str) -> Path:
    """`pip wheel` of `source` with `path` as PATH (the venv's own tools, node or not)."""
    argv = [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(source)]
    return build(argv, out, path)


def build_without_node(source: Path, kind: str, out: Path) -> Path:
    """hatchling's PEP 517 `build_{kind}` ("sdist", "editable") of `source`, with only the
    venv's own tools on PATH (no node, no npm), as pip or `python -m build` calls it."""
    call = f"from hatchling.build import build_{kind}; build_{kind}({str(out)!r})"
    return build([sys.executable, "-c", call], out, VENV_BIN, cwd=source)


def labextensions(wheel: Path, tmp_path: Path) -> str:
    """`jupyter labextension list` where only `wheel` is installed (in a private prefix)."""
    prefix = tmp_path / "prefix"
    subprocess.run(
        # --ignore-installed: without it pip uninstalls the running environment's own copy
        [*PIP, "install", "--no-deps", "--ignore-installed", "--prefix", str(prefix), str(wheel)],
        check=True,
        capture_output=True,
    )
    assert (prefix / SHARED).is_file()
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


def assert_enabled(listed: str) -> None:
    line = next(line for line in listed.splitlines() if "elelem-kernel" in line)
    assert "enabled" in line and "OK" in line, listed


@needs_node
def test_a_wheel_from_a_clean_tree_builds_and_ships_the_extension(tmp_path):
    source = with_node_modules(clean_copy(tmp_path / "src"))
    assert not (source / "elelem_kernel" / "labextension").exists()
    path = os.pathsep.join([VENV_BIN, os.environ.get("PATH", "")])
    wheel = build_wheel(source, tmp_path / "wheels", path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert any(name.endswith(f".data/data/{SHARED}") for name in names), names
    assert any("/labextensions/elelem-kernel/static/remoteEntry." in name for name in names)
    assert_enabled(labextensions(wheel, tmp_path))


@needs_built
def test_a_tree_with_the_extension_built_makes_the_wheel_without_node(tmp_path):
    source = built_copy(tmp_path / "src")
    wheel = build_wheel(source, tmp_path / "wheels", VENV_BIN)  # no node, no npm here
    assert_enabled(labextensions(wheel, tmp_path))


@needs_built
def test_the_sdist_carries_the_built_extension_so_its_wheel_needs_no_node(tmp_path):
    source = built_copy(tmp_path / "src")
    sdist = build_without_node(source, "sdist", tmp_path / "sdist")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
        names = archive.getnames()
    assert not any("node_modules" in name for name in names)
    [unpacked] = (tmp_path / "unpacked").iterdir()
    assert_enabled(labextensions(build_wheel(unpacked, tmp_path / "wheels", VENV_BIN), tmp_path))


def test_an_editable_install_needs_no_node(tmp_path):
    source = clean_copy(tmp_path / "src")
    wheel = build_without_node(source, "editable", tmp_path / "editable")
    with zipfile.ZipFile(wheel) as archive:
        assert any(name.endswith(".pth") for name in archive.namelist())
    assert not (source / "elelem_kernel" / "labextension").exists()
