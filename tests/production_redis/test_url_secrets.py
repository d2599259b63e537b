"""A password that splits its Redis URL is refused, and no error shows any part of it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import cogworker
from cogworker.adapters.redis_target import parse
from cogworker.app.cli import main

#: Passwords with the characters that end a URL's host part early, unencoded.
HOSTILE_PASSWORDS = ("Sup3r/S3cr3t", "h7#Qz!9kW", "k?Lm=zz8", "a@b/c@9Z", "Tr0/ub?le#1x")
#: Every URL form, with the password where it goes.
URL_FORMS = (
    "redis://:{}@127.0.0.1:6379/0",
    "redis://admin:{}@redis.example:6380",
    "rediss://:{}@h:6380/1?tls_verify=none",
    "redis+sentinel://:{}@h1,h2:26380/mymaster/0",
    "redis+cluster://:{}@h:7000",
    "unix://:{}@/run/redis.sock?db=1",
)
HOSTILE_URLS = [
    pytest.param(form.format(password), password, id=f"{form.partition(':')[0]}-{password}")
    for form in URL_FORMS
    for password in HOSTILE_PASSWORDS
]


def pieces(secret: str) -> list[str]:
    """Every part of `secret` at least three characters long (shorter ones are in any text)."""
    return [secret[start : start + 3] for start in range(len(secret) - 2)]


def assert_shows_none_of(secret: str, text: str) -> None:
    """No part of `secret` is in `text`."""
    shown = [piece for piece in pieces(secret) if piece in text]
    assert not shown, f"{shown} of the password shown in {text!r}"


@pytest.mark.parametrize(("url", "password"), HOSTILE_URLS)
def test_a_split_password_is_refused_without_showing_any_of_it(url: str, password: str) -> None:
    """The error says to percent-encode the password and holds no part of it."""
    with pytest.raises(ValueError, match="percent-encode") as refused:
        parse(url, "s")

    assert_shows_none_of(password, str(refused.value))


@pytest.mark.parametrize(("url", "password"), HOSTILE_URLS)
def test_config_with_a_split_password_shows_none_of_it(url: str, password: str) -> None:
    """Config's error names the setting and the masked URL, and no part of the password."""
    with pytest.raises(cogworker.ConfigError, match=r"Config\.redis_url") as refused:
        cogworker.Config(redis_url=url)

    assert_shows_none_of(password, str(refused.value))


@pytest.mark.parametrize("password", HOSTILE_PASSWORDS)
@pytest.mark.parametrize(
    "command",
    [["stats", "--redis-url", "{}"], ["work", "tests.app.cli_app"]],
    ids=["stats", "work"],
)
def test_the_cli_shows_none_of_a_split_password(
    command: list[str], password: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command given the URL as an option or in $COGWORKER_REDIS_URL exits non-zero, showing
    none of the password."""
    url = f"redis://:{password}@127.0.0.1:6379/0"
    monkeypatch.setenv("COGWORKER_REDIS_URL", url)

    result = CliRunner().invoke(main, [part.format(url) for part in command])

    assert result.exit_code != 0
    assert "percent-encode" in result.output
    assert_shows_none_of(password, result.output)


@pytest.mark.parametrize("password", ["Hunt3r2x", "Hunt@r2x"])
def test_a_sentinel_password_option_is_masked_in_an_error(password: str) -> None:
    """The sentinels' password in the query is masked like the user's, '@' and all."""
    url = f"redis+sentinel://h:26379/mymaster/0?sentinel_password={password}&bogus=1"

    with pytest.raises(cogworker.ConfigError, match=r"Config\.redis_url") as refused:
        cogworker.Config(redis_url=url)

    assert "sentinel_password=***" in str(refused.value)
    assert_shows_none_of(password, str(refused.value))


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("redis://:p%2Fw%3Fx%23y%40z@h/0", "p/w?x#y@z"),
        ("redis+sentinel://h/m/0?sentinel_password=s@nt", None),
    ],
    ids=["encoded", "at-in-option"],
)
def test_encoded_passwords_and_an_at_in_an_option_still_parse(url: str, password: str) -> None:
    """Refusing split passwords leaves the well-formed ones, and an option's '@', alone."""
    target = parse(url, "s")

    assert target.password == password
