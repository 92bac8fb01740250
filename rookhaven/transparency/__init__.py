"""Tamper evidence beside the retrieval core: the RFC 6962 Merkle tree, log leaves, C2SP
signed notes (all pure) and ``checkpoints``, the edge that holds the signing key.

The retrieval core never imports this package; the store, the verifier and the CLI do.
See docs/adr/0013-transparency-log.md.
"""
