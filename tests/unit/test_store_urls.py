"""Every store URL form in one place: what each names, its redaction, and one parse a URL."""

from __future__ import annotations

import pytest

from rookhaven.errors import ConfigError
from rookhaven.store import urls


@pytest.mark.parametrize(("url", "shown", "kind"), [
    ("redis://u:pw@h:6379/2", "redis://u:***@h:6379/2", None),
    ("rediss://:pw@h:6380/0?ssl_cert_reqs=required", "rediss://:***@h:6380/0?ssl_cert_reqs=required",
     None),
    ("unix:///run/redis.sock?db=3&password=pw", "unix:///run/redis.sock?db=3&password=***", None),
    ("sentinel://u:pw@a:26379,b/svc/1", "sentinel://u:***@a:26379,b/svc/1", "sentinel"),
    ("sentinels://a/svc?ssl_ca_certs=/ca.pem&sentinel_password=pw",
     "sentinels://a/svc?ssl_ca_certs=/ca.pem&sentinel_password=***", "sentinel"),
    ("redis+cluster://u:pw@a:7000,b", "redis+cluster://u:***@a:7000,b", "cluster"),
    ("rediss+cluster://a:7000?ssl_cert_reqs=none", "rediss+cluster://a:7000?ssl_cert_reqs=none",
     "cluster"),
])
def test_each_form_is_named_by_its_redaction_and_says_what_it_names(
        url: str, shown: str, kind: str | None) -> None:
    where = urls.parse(url)
    assert where.shown == shown and urls.redact(url) == shown
    assert "pw" not in repr(where)
    assert (where.sentinel is not None, where.cluster is not None) == (
        kind == "sentinel", kind == "cluster")
    assert urls.parse(url) is where  # parsed once however many clients it opens


@pytest.mark.parametrize(("url", "broker", "fault"), [
    (None, False, "no Redis configured: set ROOKHAVEN_REDIS_URL"),
    ("http://h", False, "has scheme 'http'"),
    ("redis://h/zero", False, "has database 'zero'"),
    ("redis+cluster://h:7000", True, "which cannot be the Celery broker"),
    ("sentinel://u:pw@a/", False, "names no service"),
    ("redis+cluster://a:7000/3", False, "a cluster has only database 0"),
])
def test_a_url_rookhaven_cannot_use_is_refused_saying_why_without_its_password(
        url: str | None, broker: bool, fault: str) -> None:
    with pytest.raises(ConfigError, match=fault) as caught:
        urls.parse(url, broker=broker)
    assert "pw" not in str(caught.value)
