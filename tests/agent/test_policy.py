"""Where the site policy is found, how several files combine, and what a session makes of it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from elelem_kernel.agent import policy
from elelem_kernel.agent.budget import Budget
from elelem_kernel.errors import ConfigError


def write(folder: Path, **data) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "elelem_policy.json"
    path.write_text(json.dumps(data))
    return path


def test_the_system_folders_are_jupyters_and_nothing_of_the_person():
    folders = policy.system_folders()
    assert folders == [
        Path("/etc/jupyter"),
        Path("/usr/local/etc/jupyter"),
        Path(sys.prefix) / "etc" / "jupyter",
    ]
    assert not any(str(Path.home()) in str(f) for f in folders)


def test_files_in_the_folders_and_elelem_policy_all_apply_each_narrowing(tmp_path):
    system = write(
        tmp_path / "etc", providers={"allow": ["openai", "anthropic"]}, tools={"deny": ["bash"]}
    )
    named = write(tmp_path / "mine", providers={"allow": ["*"]}, tools={"deny": ["python"]})
    found = policy.load(
        {"ELELEM_POLICY": str(named)}, folders=[tmp_path / "etc", tmp_path / "none"]
    )
    assert [f.path for f in found.files] == [system, named]
    found.check_provider("openai")
    with pytest.raises(
        ConfigError, match=f'provider "ollama" is not allowed by the site policy \\({system}'
    ):
        found.check_provider("ollama")  # the second file's "*" does not loosen the first
    assert found.denies("bash") and found.denies("python") and not found.denies("read")


def test_budgets_and_modes_add_up_across_files(tmp_path):
    one = write(
        tmp_path / "a",
        budget={"day": "20", "session": "200k tokens"},
        modes={"allow": ["plan", "build"]},
    )
    two = write(tmp_path / "b", budget={"session": 2}, modes={"allow": ["build", "auto"]})
    found = policy.load({"ELELEM_POLICY": str(two)}, folders=[one.parent])
    assert set(found.budgets) == {
        Budget(20.0, "usd", "day"),
        Budget(200_000, "tokens", "session"),
        Budget(2.0, "usd", "session"),
    }
    assert found.allowed_modes() == ["plan", "build"]  # plan, read-only, always
    assert found.first_mode("auto") == "plan" and found.first_mode("build") == "build"


def test_a_changed_file_is_read_again(tmp_path):
    path = write(tmp_path, tools={"deny": ["bash"]})
    assert policy.load({"ELELEM_POLICY": str(path)}, folders=[]).denies("bash")
    path.write_text(json.dumps({"tools": {"deny": ["grep"]}, "message": "Changed."}))
    fresh = policy.load({"ELELEM_POLICY": str(path)}, folders=[])
    assert fresh.denies("grep") and not fresh.denies("bash")


def test_no_file_restricts_nothing():
    empty = policy.load({}, folders=[])
    assert not empty and empty.allowed_modes() == ["plan", "build", "verify", "auto"]
    empty.check_model("anything", "any-model")
    assert empty.denies("bash") is None and empty.asks("write") is None
    assert "No site policy is in force" in empty.describe()


def test_a_huge_or_binary_policy_is_refused_naming_it(tmp_path):
    huge = tmp_path / "huge.json"
    huge.write_text('{"message": "' + "x" * 2_000_000 + '"}')
    with pytest.raises(ConfigError, match=f"site policy {huge}: larger than 1,000,000 bytes"):
        policy.load({"ELELEM_POLICY": str(huge)}, folders=[])
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ConfigError, match=f"site policy {binary}: not UTF-8 text"):
        policy.load({"ELELEM_POLICY": str(binary)}, folders=[])
