"""Prometheus metrics: cluster-wide counts read from the store at scrape time, plus this
process's own MCP call counts.

Job, result and verification counters live in Redis (``<prefix>:counters``), incremented in
the same atomic step as the event they count, so every exporter (a worker, the MCP server,
``rookhaven metrics``) reports the same totals, and a restarted worker loses none.
Metric names and labels are documented in docs/operations.md.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, generate_latest, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .errors import RookhavenError

if TYPE_CHECKING:  # an MCP server counting its calls over a file needs no Redis client
    from .store import Store

# This process's MCP tool calls; the one registry a process exports alongside the store's.
PROCESS = CollectorRegistry(auto_describe=True)
MCP_CALLS = Counter("rookhaven_mcp_calls", "MCP tool calls served by this process",
                    ["operation", "outcome"], registry=PROCESS)
# Refusals by token (its name: the operator's token file bounds the labels) and the limit
# it was past: sessions, requests (a second), open-jobs, scope.
MCP_REFUSALS = Counter("rookhaven_mcp_refusals", "MCP requests and calls refused to a token "
                       "past one of its limits, by this process", ["token", "limit"],
                       registry=PROCESS)

JOB_EVENTS = ("queued", "running", "done", "failed", "retry", "requeued")


class StoreCollector(Collector):
    """Reads the store's counters and open-job counts on every scrape."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("rookhaven_store_up", "1 if the store answered this scrape")
        try:
            counters = self.store.verifications.counters()
            open_jobs = self.store.jobs.counts()
        except RookhavenError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        events = CounterMetricFamily("rookhaven_job_events",
                                     "Job state changes recorded in the ledger", labels=["event"])
        for event in JOB_EVENTS:
            events.add_metric([event], counters.get(f"jobs_{event}", 0))
        yield events
        opened = GaugeMetricFamily("rookhaven_jobs_open", "Jobs queued or running now",
                                   labels=["state"])
        for state, count in sorted(open_jobs.items()):
            opened.add_metric([state], count)
        yield opened
        for name, field, doc in (
            ("rookhaven_results_stored", "results_stored", "Results written (write-once)"),
            ("rookhaven_integrity_violations", "integrity_violations",
             "Attempts to store different bytes under an existing key"),
            ("rookhaven_messages_rejected", "messages_rejected",
             "Broker messages dropped unexecuted (malformed, or naming no job)"),
            ("rookhaven_verification_runs", "verify_runs", "Verification runs completed"),
            ("rookhaven_verification_alarms", "verify_alarms",
             "Verifier alarms: mismatch, missing corpus, result or recipe"),
            ("rookhaven_verification_drift", "verify_drift",
             "Replayed results made by another engine version (no alarm)"),
        ):
            yield CounterMetricFamily(name, doc, value=counters.get(field, 0))
        replayed = CounterMetricFamily("rookhaven_verified_results",
                                       "Stored results replayed by the verifier",
                                       labels=["outcome"])
        replayed.add_metric(["match"], counters.get("verify_matched", 0))
        replayed.add_metric(["other"], counters.get("verify_checked", 0)
                            - counters.get("verify_matched", 0))
        yield replayed


def registry_for(store: Store | None) -> CollectorRegistry:
    """A registry with the store's metrics (if any) and this process's."""
    registry = CollectorRegistry(auto_describe=False)
    if store is not None:
        registry.register(StoreCollector(store))
    registry.register(_Process())
    return registry


class _Process(Collector):
    """Re-exports the process registry, so one scrape shows both."""

    def collect(self) -> Iterator[Metric]:
        yield from PROCESS.collect()


def exposition(store: Store | None) -> bytes:
    """The metrics in Prometheus text format, now."""
    return generate_latest(registry_for(store))


def serve(store: Store | None, host: str, port: int) -> tuple[WSGIServer, threading.Thread]:
    """Serve /metrics on ``host:port`` from a daemon thread."""
    return start_http_server(port, addr=host, registry=registry_for(store))
