"""From URLs and Config fields to the one RedisTarget: every form, and what can't work."""

from __future__ import annotations

import pytest

import cogworker
from cogworker.adapters.redis_target import RedisTarget, Sentinels, Tls, parse

SENTINEL_URL = "redis+sentinel://u:p%40ss@10.0.0.1,10.0.0.2:26380/mymaster/3"

FORMS = [
    pytest.param(
        "redis://u:pw@h:7000/2",
        RedisTarget(setting="s", host="h", port=7000, db=2, username="u", password="pw"),
        "redis://u:***@h:7000/2",
        id="redis",
    ),
    pytest.param(
        "rediss://:pw@h/0?tls_ca_file=/ca.pem&tls_verify=ca",
        RedisTarget(setting="s", host="h", password="pw", tls=Tls(ca_file="/ca.pem", verify="ca")),
        "rediss://***@h:6379/0",
        id="rediss",
    ),
    pytest.param(
        "unix:///run/redis.sock?db=4",
        RedisTarget(setting="s", path="/run/redis.sock", db=4),
        "unix:///run/redis.sock?db=4",
        id="unix",
    ),
    pytest.param(
        SENTINEL_URL + "?sentinel_password=sp",
        RedisTarget(
            setting="s",
            db=3,
            username="u",
            password="p@ss",
            sentinels=Sentinels(
                addresses=(("10.0.0.1", 26379), ("10.0.0.2", 26380)),
                master="mymaster",
                password="sp",
            ),
        ),
        "redis+sentinel://u:***@10.0.0.1:26379,10.0.0.2:26380/mymaster/3",
        id="sentinel",
    ),
]


@pytest.mark.parametrize(("url", "target", "label"), FORMS)
def test_each_url_form_reads_as_its_target(url: str, target: RedisTarget, label: str) -> None:
    """Each scheme's parts land where they belong; the label never shows a password."""
    parsed = parse(url, "s")
    assert parsed == target
    assert parsed.label == label


MALFORMED = [
    pytest.param("foo://h", "the scheme of a Redis URL is one of", id="scheme"),
    pytest.param("redis://h/abc", "the database 'abc' is not a number", id="database"),
    pytest.param("redis://h:99999/0", "is not a number from 0 to 65535", id="port"),
    pytest.param("redis://h/0?ssl_ca_certs=x", "'ssl_ca_certs' is not one cogworker", id="option"),
    pytest.param("redis://h/0?tls_ca_file=x", "need a rediss:// URL", id="tls-on-plain"),
    pytest.param("rediss://h/0?tls_verify=maybe", "tls_verify is one of", id="verify"),
    pytest.param("redis+sentinel://h:1", "names the master after the hosts", id="no-master"),
    pytest.param("redis://h/0?sentinel_password=x", "does not apply", id="sentinel-option"),
    pytest.param("redis+cluster://h:7000/3", "only database 0, not 3", id="cluster-database"),
    pytest.param("redis+cluster://h:7000,:7001", "names no host", id="cluster-no-host"),
    pytest.param("redis+cluster://h/0?tls_ca_file=x", "need a rediss:// URL", id="cluster-tls"),
]


@pytest.mark.parametrize(("url", "says"), MALFORMED)
def test_a_malformed_url_says_what_is_wrong(url: str, says: str) -> None:
    """A ValueError naming the part that can't work, never a silent default."""
    with pytest.raises(ValueError, match=says):
        parse(url, "s")


def test_config_fields_complete_and_win_over_the_url() -> None:
    """The password, the TLS files and the sentinels' password of fields win over the URL's."""
    config = cogworker.Config(
        redis_url="rediss://u:pw-old-7@h/0?tls_ca_file=/old.pem",
        redis_password="pw-new-9",
        redis_tls_ca_file="/new.pem",
        redis_tls_verify="ca",
    )
    target = config.redis_target()
    assert (target.username, target.password) == ("u", "pw-new-9")
    assert target.tls == Tls(ca_file="/new.pem", verify="ca")
    assert target.setting == "Config.redis_url"
    shown = repr(config) + repr(target)
    assert "pw-old-7" not in shown
    assert "pw-new-9" not in shown


def test_config_sentinels_with_tls_fields_speak_tls() -> None:
    """Config.sentinels has no scheme: a TLS field turns TLS on."""
    config = cogworker.Config(
        sentinels=[["s1", 26379]], sentinel_master="m", redis_tls_verify="full"
    )
    target = config.redis_target()
    assert target.sentinels == Sentinels(addresses=(("s1", 26379),), master="m")
    assert target.tls == Tls()
    assert target.label == "rediss+sentinel://s1:26379/m/0"


CONFLICTS = [
    pytest.param(
        {"redis_url": "redis://h/0", "redis_tls_ca_file": "/ca.pem"},
        "Config.redis_tls_ca_file is set, but Config.redis_url redis://h:6379/0 doesn't use TLS",
        id="tls-field-plain-url",
    ),
    pytest.param(
        {"redis_url": "redis://h/0", "sentinels": [("s", 1)], "sentinel_master": "m"},
        "Config.redis_url and Config.sentinels both say where Redis is",
        id="url-and-sentinels",
    ),
    pytest.param(
        {"sentinels": [("s", 1)]},
        "Config.sentinels and Config.sentinel_master go together",
        id="no-master",
    ),
    pytest.param(
        {"redis_url": "redis://h/0", "sentinel_password": "x"},
        "names no sentinels",
        id="sentinel-password-no-sentinels",
    ),
    pytest.param(
        {"sentinels": [("s", 0)], "sentinel_master": "m"},
        "Config.sentinels: \\(host, port\\) pairs",
        id="bad-address",
    ),
]


@pytest.mark.parametrize(("fields", "says"), CONFLICTS)
def test_settings_that_cannot_work_together_are_a_config_error(
    fields: dict[str, object], says: str
) -> None:
    """Raised when the Config is built, naming the fields."""
    with pytest.raises(cogworker.ConfigError, match=says):
        cogworker.Config(**fields)  # type: ignore[arg-type]  # the fields under test
