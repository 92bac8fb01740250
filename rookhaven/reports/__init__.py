"""Auditors' reports: a re-ranking or verification run as one self-contained HTML page."""

from .pages import rerank_page, verification_page
from .sources import page_for

__all__ = ["page_for", "rerank_page", "verification_page"]
