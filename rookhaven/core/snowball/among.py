"""Snowball's Among: one entry of a suffix table, as generated stemmers use it."""
# Vendored unchanged from the PyPI package snowballstemmer 3.1.0 (BSD-3-Clause, see
# LICENSE in this directory); english_stemmer.py was generated from english.sbl by
# Snowball 3.1.0. Everything below the marker line is the upstream file byte for byte;
# tests/unit/test_snowball.py checks it against this digest.
# upstream sha256: 4b8b17bf3f97d46a1a536c288defe193147b15bd8edb01bbd3f64c57b8b5e2af
# ruff: noqa
# mypy: ignore-errors
# --- upstream file follows ---
class Among:
    def __init__(self, s, substring_i, result, method=None):
        """
        @ivar s search string
        @ivar substring index to longest matching substring
        @ivar result of the lookup
        @ivar method method to use if substring matches
        """
        self.s = s
        self.substring_i = substring_i
        self.result = result
        self.method = method
