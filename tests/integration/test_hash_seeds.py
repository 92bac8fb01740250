"""Nothing depends on the hash seed: fresh interpreters under different PYTHONHASHSEEDs build
the same index arrays and give the same bytes."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT
from tests.replay_script import digests, run_in


def test_two_processes_with_different_hash_seeds_give_the_same_bytes() -> None:
    first = run_in(sys.executable, "1")
    assert first == run_in(sys.executable, "4242") == digests()


def test_index_arrays_do_not_depend_on_the_hash_seed() -> None:
    code = ("from tests.unit.test_index import DOCS; from rookhaven.core.corpus import Corpus;"
            "from rookhaven.core.analyzer import Analyzer; from rookhaven.core.index import "
            "build_index; import hashlib; i = build_index(Corpus(DOCS), Analyzer());"
            "print(hashlib.sha256(repr(i.vocabulary).encode() + i.docs.tobytes() + "
            "i.tfs.tobytes() + i.offsets.tobytes()).hexdigest())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=ROOT,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout
            for seed in ("0", "1", "12345")}
    assert len(outs) == 1
