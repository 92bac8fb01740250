"""The pure retrieval core: no I/O, clocks, environment or globals; all comes in as arguments."""
