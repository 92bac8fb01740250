"""The Unicode 14.0 text rules (every split) and the vendored stemmer give the same bytes on
CPython 3.13."""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path

import pytest

from rookhaven.core.snowball import SNOWBALL_VERSION, EnglishStemmer
from rookhaven.core.textrules import text_rules
from tests.conftest import ROOT
from tests.pinned_text_script import GOLDEN_DIR, digests, unpinned_split, words_digest

pytestmark = pytest.mark.no_kernels  # text rules only
SCRIPT = ROOT / "tests" / "pinned_text_script.py"
PY313 = Path("~/.pyenv/versions/3.13.0/bin/python3.13").expanduser()


@pytest.mark.slow
def test_cpython_3_13_gives_the_pinned_tokens_and_stems_of_3_11() -> None:
    if unicodedata.unidata_version != "14.0.0":
        pytest.skip("the reference side must run under Unicode 14.0 (CPython 3.11)")
    if not PY313.exists():
        pytest.skip(f"CPython 3.13 (Unicode 15.1) is not installed at {PY313}")
    # -S: no site-packages, so the pinned modules can only lean on the standard library.
    # 3.13 digests while this side does (each takes ~15 s of one core).
    with subprocess.Popen([str(PY313), "-S", str(SCRIPT)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "7"}) as done:
        golden = GOLDEN_DIR / f"english-snowball-{SNOWBALL_VERSION}.tsv"
        # Here, the interpreter's own Unicode 14.0 analysis: what Rookhaven did before
        # pinning, which the pinned rules must give on every later Python.
        here = digests(unpinned_split, EnglishStemmer().stem_words, golden, [])
        words = words_digest(text_rules("14.0").split_words)
        visible = words_digest(text_rules("14.0").split_visible_words)
        out, err = done.communicate(timeout=600)
    assert done.returncode == 0, err[-2000:]
    there = json.loads(out)
    assert there["unidata_version"] == "15.1.0"
    assert there["loaded"] == []
    assert (there["tokens"], there["stems"]) == (here["tokens"], here["stems"])
    # The "words" split (bm25@5): 3.11's pinned rules are the reference.
    assert there["words"] == words
    assert there["visible"] == visible  # and the "visible-words" split (bm25@6)
    # The check has teeth: unpinned analysis on 3.13 reads U+1E030 (new in Unicode 15.0) as
    # a letter folding to Cyrillic a. (Digesting 3.13's unpinned analysis of every code
    # point showed the same and doubled this test's minute of CPU.)
    assert there["unpinned_sample"] == ["ab\u0430cd"] and there["sample"] == ["ab", "cd"]
    assert here["sample"] == ["ab", "cd"]
