"""Secret redaction: which values count as secrets, and the encodings that are caught."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

from elelem_kernel.redaction import forms_of, redact, secret_forms, secret_values

KEY = "sk-proj-Abc123XyZ789qrs"


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PASS",
        "SMTP_PASSWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "HTTP_AUTH",
        "HTTP_AUTHORIZATION",
        "SSH_PRIVATE",
        "openai_key",
    ],
)
def test_secret_names(name: str) -> None:
    assert redact(f"value: {KEY}!", secret_forms({name: KEY})) == f"value: [redacted: {name}]!"


def test_ordinary_names_and_authors_are_left_alone() -> None:
    env = {
        "HOME": "/home/someone/x",
        "GIT_AUTHOR_NAME": "Jane Q. Doe",
        "GIT_AUTHOR_EMAIL": "jane.doe@example.com",
        "EDITOR": KEY,
    }
    assert secret_values(env) == {}
    text = f"Jane Q. Doe <jane.doe@example.com> {KEY}"
    assert redact(text, secret_forms(env)) == text


def test_url_passwords_are_redacted_in_any_value_and_any_text() -> None:
    env = {"DATABASE_URL": "postgres://app:Sup3r-Secret-pw@db.internal:5432/main"}
    forms = secret_forms(env)
    assert redact("pw is Sup3r-Secret-pw", forms) == "pw is [redacted: DATABASE_URL password]"
    # a short password, and one that is in no variable: the URL's shape gives it away
    for url in ("postgres://u:p@h/db", "https://bob:hunter2@example.com/x"):
        scheme, rest = url.split("://")
        user = rest.split(":")[0]
        host = rest.split("@")[1]
        assert redact(f"url={url} end", forms) == f"url={scheme}://{user}:[redacted]@{host} end"
    assert redact("see http://example.com:8080/a@b and a:b@c", forms) == (
        "see http://example.com:8080/a@b and a:b@c"
    )


def test_encoded_forms_of_a_secret_are_redacted() -> None:
    forms = secret_forms({"OPENAI_KEY": KEY})
    raw = KEY.encode()
    encodings = {
        "base64": base64.b64encode(raw).decode(),
        "unpadded": base64.b64encode(raw).decode().rstrip("="),
        "urlsafe": base64.urlsafe_b64encode(b"\xfb\xff" + raw).decode(),
        "basic auth": base64.b64encode(b"user:" + raw + b"\n").decode(),
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "reversed": KEY[::-1],
    }
    for how, text in encodings.items():
        got = redact(f"<{text}>", forms)
        assert "redacted: OPENAI_KEY" in got, how
        left = got.replace("[redacted: OPENAI_KEY", "")
        for piece in (KEY, KEY[::-1], raw.hex(), KEY[4:16]):
            assert piece not in left, how


def test_percent_encoded_form_is_redacted() -> None:
    forms = secret_forms({"SMTP_PASSWORD": "p@ss/w0rd+Strong"})
    assert (
        redact("pw=p%40ss%2Fw0rd%2BStrong&x=1", forms)
        == "pw=[redacted: SMTP_PASSWORD (url-encoded)]&x=1"
    )


def test_short_and_plain_word_values_are_not_secrets() -> None:
    env = {
        "SHORT_TOKEN": "abc1234",  # under 8 characters
        "PIP_KEYRING_PROVIDER": "subprocess",  # one kind of character, under 16
        "REDIS_AUTH_HOST": "localhost",
        "LONG_PASSWORD": "correcthorsebatterystaple",  # 16 or more: a secret
        "MIXED_TOKEN": "hunter2hunter2",  # two kinds of character: a secret
    }
    assert set(secret_values(env).values()) == {"LONG_PASSWORD", "MIXED_TOKEN"}
    text = "import subprocess on localhost abc1234"
    assert redact(text, secret_forms(env)) == text


def test_nested_values_and_the_live_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_KEY", KEY)
    value = {"a": [f"x{KEY}", {"b": base64.b64encode(KEY.encode()).decode()}], "n": 3}
    got = json.dumps(redact(value))
    assert KEY not in got and "[redacted: OPENAI_KEY" in got and '"n": 3' in got


def test_a_shell_printing_the_environment_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_KEY", KEY)
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@h/db")
    printed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os,base64;print(os.environ);"
            "print(base64.b64encode(os.environ['OPENAI_KEY'].encode()));"
            "print(os.environ['OPENAI_KEY'][::-1])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    got = redact(printed)
    assert KEY not in got and KEY[::-1] not in got and "u:p@" not in got
    assert base64.b64encode(KEY.encode()).decode()[:20] not in got


@pytest.mark.timeout(60)
def test_url_search_stays_linear_on_hostile_text() -> None:
    texts = ["a.a" * 100_000 + "://u:p@h", "x://u:" + "p" * 300_000, "://:" * 100_000]
    for text in texts:
        assert redact(text, {}).startswith(text[:10])


def test_secrets_in_dict_keys_are_redacted_and_keys_stay_distinct():
    env = {"API_TOKEN": "Tok3n-secret-value"}
    forms = secret_forms(env)
    value = {"Tok3n-secret-value": {"nested": ["Tok3n-secret-value"]}, "[redacted: API_TOKEN]": 1}
    got = redact(value, forms)
    assert "Tok3n-secret-value" not in json.dumps(got)
    assert got == {
        "[redacted: API_TOKEN]": {"nested": ["[redacted: API_TOKEN]"]},
        "[redacted: API_TOKEN] (2)": 1,
    }
    assert redact({"tok-1234": "tok-1234"}, forms_of(["tok-1234"])) == {"[redacted]": "[redacted]"}


def test_one_pattern_names_secrets_for_the_environment_and_the_options():
    from elelem_kernel.options import describe

    assert describe({"api_key": "k", "token": "t", "max_tokens": 5, "password": "p"}) == (
        "api_key=***, token=***, max_tokens=5, password=***"
    )
    assert secret_values({"MAX_TOKENS": "1234567890123456", "HF_TOKEN": "hf_abcdefgh12"}) == {
        "hf_abcdefgh12": "HF_TOKEN"
    }
