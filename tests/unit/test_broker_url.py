"""ROOKHAVEN_BROKER_URL: a broker apart from the store, the store's by default, never a cluster."""

from __future__ import annotations

import pytest

from rookhaven.config import Settings
from rookhaven.errors import ConfigError
from rookhaven.pipeline import celery_config
from rookhaven.store import connect


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
def test_a_cluster_is_refused_as_broker_and_as_store_saying_why(url: str) -> None:
    with pytest.raises(ConfigError) as broker:
        celery_config(Settings.from_mapping({"ROOKHAVEN_REDIS_URL": "redis://s:6379/1",
                                             "ROOKHAVEN_BROKER_URL": url}))
    message = str(broker.value)
    assert message.startswith("ROOKHAVEN_BROKER_URL") and "cannot be the Celery broker" in message
    assert "standalone or sentinel://" in message and "\n" not in message
    with pytest.raises(ConfigError, match=r"ROOKHAVEN_REDIS_URL .* store cannot use yet"):
        connect(url)


def test_a_bad_broker_url_names_its_own_setting() -> None:
    with pytest.raises(ConfigError, match=r"^ROOKHAVEN_BROKER_URL 'http://x' has scheme"):
        celery_config(Settings.from_mapping({"ROOKHAVEN_REDIS_URL": "redis://s:6379/1",
                                             "ROOKHAVEN_BROKER_URL": "http://x"}))
    with pytest.raises(ConfigError, match="set ROOKHAVEN_REDIS_URL"):
        celery_config(Settings())
