"""Redis URLs as checked at start-up; ROOKHAVEN_BROKER_URL apart from the store, never a cluster."""

from __future__ import annotations

import fakeredis
import pytest
from redis.exceptions import MovedError

from rookhaven.config import Settings
from rookhaven.errors import ConfigError, StoreUnavailableError
from rookhaven.pipeline import celery_config
from rookhaven.store import connect, urls
from rookhaven.store.connection import translated


def test_the_broker_is_the_store_unless_its_own_url_is_set() -> None:
    same = celery_config(Settings.from_mapping({"ROOKHAVEN_REDIS_URL": "redis://s:6379/1"}))
    assert same["broker_url"] == "redis://s:6379/1"
    apart = celery_config(Settings.from_mapping({"ROOKHAVEN_REDIS_URL": "redis://s:6379/1",
                                                 "ROOKHAVEN_BROKER_URL": "redis://b:6380/0"}))
    assert apart["broker_url"] == "redis://b:6380/0"
    sentinel = celery_config(Settings.from_mapping({
        "ROOKHAVEN_REDIS_URL": "redis://s:6379/1",
        "ROOKHAVEN_BROKER_URL": "sentinel://h1:26379,h2:26379/brokers/0"}))
    assert sentinel["broker_transport_options"]["master_name"] == "brokers"


@pytest.mark.parametrize("url", ["redis+cluster://a:7000,b:7001", "rediss+cluster://a:7000"])
def test_a_cluster_is_refused_as_broker_saying_why_and_what_to_set(url: str) -> None:
    with pytest.raises(ConfigError) as broker:
        celery_config(Settings.from_mapping({"ROOKHAVEN_REDIS_URL": "redis://s:6379/1",
                                             "ROOKHAVEN_BROKER_URL": url}))
    message = str(broker.value)
    assert message.startswith("ROOKHAVEN_BROKER_URL") and "cannot be the Celery broker" in message
    assert "standalone or sentinel://" in message and "\n" not in message
    # A cluster store with no broker of its own: the broker would be the cluster.
    with pytest.raises(ConfigError, match=r"^ROOKHAVEN_REDIS_URL .* set ROOKHAVEN_BROKER_URL"):
        celery_config(Settings.from_mapping({"ROOKHAVEN_REDIS_URL": url}))


@pytest.mark.parametrize(("url", "message"), [
    ("redis+cluster://a:7000/3", "names database '3'; a cluster has only database 0"),
    ("redis+cluster://a:99999", "has node address 'a:99999'"),
    ("redis+cluster://a:7000?ssl_cert_reqs=required", "takes only the TLS options"),
    ("rediss+cluster://a:7000?db=2", "takes only the TLS options"),
])
def test_a_cluster_url_that_cannot_be_one_says_why(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        connect(url)


def test_a_cluster_url_parses_its_nodes_login_and_tls() -> None:
    parsed = urls.cluster_url("rediss+cluster://u:p%40ss@a:7000,[::1]:7001,b?ssl_cert_reqs=none",
                           "shown")
    assert parsed.nodes == (("a", 7000), ("::1", 7001), ("b", 6379))
    assert (parsed.username, parsed.password, parsed.tls) == ("u", "p@ss", True)
    assert parsed.tls_options == (("ssl_cert_reqs", "none"),) and "p@ss" not in repr(parsed)


def test_a_bad_broker_url_names_its_own_setting() -> None:
    with pytest.raises(ConfigError, match=r"^ROOKHAVEN_BROKER_URL 'http://x' has scheme"):
        celery_config(Settings.from_mapping({"ROOKHAVEN_REDIS_URL": "redis://s:6379/1",
                                             "ROOKHAVEN_BROKER_URL": "http://x"}))
    with pytest.raises(ConfigError, match="set ROOKHAVEN_REDIS_URL"):
        celery_config(Settings())


def test_a_cluster_that_does_not_answer_is_one_line_after_the_timeout() -> None:
    with pytest.raises(StoreUnavailableError) as caught:
        connect("redis+cluster://127.0.0.1:1", timeout=0.3)
    message = str(caught.value)
    assert "Redis Cluster via 127.0.0.1:1 did not answer" in message
    assert "ROOKHAVEN_REDIS_TIMEOUT" in message and "\n" not in message and len(message) < 500


def test_a_cluster_url_may_name_its_only_database_and_a_node_of_one_is_named_in_errors() -> None:
    assert urls.cluster_url("redis+cluster://a:7000/0", "shown").nodes == (("a", 7000),)
    client = fakeredis.FakeRedis()
    with (pytest.raises(StoreUnavailableError, match=r"name the cluster as redis\+cluster://"),
          translated(client, "reading the store's layout")):
        raise MovedError("3121 127.0.0.1:7001")  # what a node answers for another's slot


@pytest.mark.parametrize("database", ["3x", "abc", "²", "٣", "0/extra"])
def test_a_database_that_is_not_a_number_is_refused_not_read_as_database_0(
        database: str) -> None:
    with pytest.raises(ConfigError, match=f"has database '{database}'; the database is a number"):
        connect(f"redis://127.0.0.1:6379/{database}")


def test_a_numbered_database_or_none_is_accepted() -> None:
    assert connect("redis://127.0.0.1:6379/3").connection_pool.connection_kwargs["db"] == 3
    assert connect("redis://127.0.0.1:6379/").connection_pool.connection_kwargs.get("db", 0) == 0
