"""Generated Unicode tables, one module per pinned version (tools/generate_chartables.py)."""
