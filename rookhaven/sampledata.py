"""The sample data shipped with the package: a port-operations corpus and auditor queries."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .corpusfile import load_documents
from .models import Document, RetrievalRequest


def data_path(name: str) -> Path:
    """Filesystem path of a file in ``rookhaven/data``."""
    return Path(str(resources.files("rookhaven") / "data" / name))


def sample_corpus(name: str = "port_ops.jsonl") -> list[Document]:
    """The shipped port-operations corpus (or its edited next version)."""
    return load_documents(data_path(name), max_docs=100_000)


def sample_requests() -> list[RetrievalRequest]:
    """The shipped auditor queries."""
    lines = data_path("demo_queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [RetrievalRequest.model_validate_json(line) for line in lines if line.strip()]
