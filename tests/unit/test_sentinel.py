"""Sentinel URLs: parsing, redaction, the store's client, the broker's config; replication."""

from __future__ import annotations

import fakeredis
import pytest
from redis.sentinel import SentinelConnectionPool

from rookhaven.config import Settings
from rookhaven.errors import ConfigError
from rookhaven.pipeline import celery_config
from rookhaven.store import Store, connect, redact
from rookhaven.store.connection import describe
from rookhaven.store.urls import sentinel_url as parse

URL = "sentinel://app:p%40ss@10.0.0.1:26380,sentinel-b,[fd00::3]:26381/rookhaven/2"


def test_a_sentinel_url_names_its_sentinels_service_database_and_login() -> None:
    where = parse(URL, "shown")
    assert where.sentinels == (("10.0.0.1", 26380), ("sentinel-b", 26379), ("fd00::3", 26381))
    assert (where.service, where.db, where.username, where.password) == (
        "rookhaven", 2, "app", "p@ss")
    assert not where.tls and where.tls_kwargs() == {}
    assert where.sentinel_login() == {}
    assert "p@ss" not in repr(where)
    assert parse("sentinel://h/svc", "x").db == 0


def test_tls_and_the_sentinels_own_login_come_from_the_scheme_and_options() -> None:
    where = parse("sentinels://h:1/svc?ssl_cert_reqs=none&sentinel_password=sp&"
                  "ssl_ca_certs=/ca.pem", "x")
    assert where.tls_kwargs() == {"ssl": True, "ssl_cert_reqs": "none",
                                  "ssl_ca_certs": "/ca.pem"}
    assert where.sentinel_login() == {"password": "sp"} and where.data_login() == {}


@pytest.mark.parametrize(("url", "fault"), [
    ("sentinel://h:26379", "names no service"),
    ("sentinel://h:26379/", "names no service"),
    ("sentinel://h:0/svc", "Sentinel address 'h:0'"),
    ("sentinel://h:26379,,g/svc", "Sentinel address ''"),
    ("sentinel://h/svc/db1", "database 'db1'"),
    ("sentinel://h/svc/²", "database '²'"),
    ("sentinel://h/svc/٣", "database '٣'"),
    ("sentinel://h/svc?ssl_cert_reqs=none", "TLS options without TLS"),
    ("sentinel://h/svc?sentinel_pasword=x", "unknown option.*sentinel_pasword.*accepted: "),
])
def test_a_malformed_sentinel_url_is_a_config_error_saying_what_is_wrong(
        url: str, fault: str) -> None:
    with pytest.raises(ConfigError, match=fault):
        connect(url)


def test_passwords_of_sentinel_urls_are_redacted_everywhere() -> None:
    shown = redact("sentinel://app:secret@h1:1,h2:2/svc/0?sentinel_password=other")
    assert shown == "sentinel://app:***@h1:1,h2:2/svc/0?sentinel_password=***"
    with pytest.raises(ConfigError) as caught:
        connect("sentinel://app:secret@h1:1/svc/x?sentinel_password=other")
    assert "secret" not in str(caught.value) and "other" not in str(caught.value)


def test_the_store_asks_the_sentinels_for_the_primary_of_its_service() -> None:
    client = connect(URL, timeout=0.5)
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "rookhaven" and pool.is_master
    assert (pool.connection_kwargs["db"], pool.connection_kwargs["password"]) == (2, "p@ss")
    sentinels = [s.connection_pool.connection_kwargs for s in pool.sentinel_manager.sentinels]
    assert [(s["host"], s["port"], s["socket_timeout"]) for s in sentinels] == [
        ("10.0.0.1", 26380, 0.5), ("sentinel-b", 26379, 0.5), ("fd00::3", 26381, 0.5)]
    assert sentinels[0]["password"] is None  # the data nodes' password is not theirs
    assert describe(client) == ("the primary of Sentinel service 'rookhaven' (db 2) via "
                                "10.0.0.1:26380,sentinel-b:26379,fd00::3:26381")


def test_the_broker_uses_kombus_sentinel_transport_from_the_same_url() -> None:
    conf = celery_config(Settings(redis_url=URL))
    assert conf["broker_url"] == ("sentinel://app:p%40ss@10.0.0.1:26380/2;"
                                  "sentinel://sentinel-b:26379;sentinel://[fd00::3]:26381")
    options = conf["broker_transport_options"]
    assert options["master_name"] == "rookhaven"
    assert options["sentinel_kwargs"] == {"socket_timeout": 5.0, "socket_connect_timeout": 5.0}
    assert options["visibility_timeout"] == 600.0 and "broker_use_ssl" not in conf
    tls = celery_config(Settings(redis_url="sentinels://h/svc?sentinel_password=sp"))
    assert tls["broker_use_ssl"] == {"ssl_cert_reqs": "required"}
    assert tls["broker_transport_options"]["sentinel_kwargs"]["ssl"] is True
    assert tls["broker_transport_options"]["sentinel_kwargs"]["password"] == "sp"


def test_a_plain_redis_url_keeps_the_plain_transport() -> None:
    conf = celery_config(Settings(redis_url="redis://h:6379/0"))
    assert conf["broker_url"] == "redis://h:6379/0"
    assert "master_name" not in conf["broker_transport_options"]


def test_no_replicas_required_means_no_wait_and_no_write() -> None:
    client = fakeredis.FakeRedis()  # fakeredis has no WAIT: any call would fail here
    store = Store(client, "t", min_replicas=0)
    store.replication.confirm("anything")
    assert client.keys("*") == []


def test_a_replica_timeout_at_or_above_the_socket_timeout_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"ROOKHAVEN_REDIS_REPLICA_TIMEOUT .* below"):
        Settings.from_mapping({"ROOKHAVEN_REDIS_MIN_REPLICAS": "1",
                               "ROOKHAVEN_REDIS_TIMEOUT": "2",
                               "ROOKHAVEN_REDIS_REPLICA_TIMEOUT": "2"})
    assert Settings.from_mapping({"ROOKHAVEN_REDIS_MIN_REPLICAS": "1"}).redis_min_replicas == 1
