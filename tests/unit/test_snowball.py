"""The vendored Snowball English stemmer: upstream bytes, golden stems, PyStemmer agrees."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys

import pytest

from rookhaven.core.snowball import SNOWBALL_VERSION, EnglishStemmer, compiled_agrees
from tests.conftest import ROOT, SHARED

VENDORED = ROOT / "rookhaven" / "core" / "snowball"
GOLDEN = ROOT / "tests" / "golden" / "stems" / f"english-snowball-{SNOWBALL_VERSION}.tsv"
MARKER = b"# --- upstream file follows ---\n"


def golden_pairs() -> list[tuple[str, str]]:
    """The golden (token, stem) pairs, in file order."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return [(word, stem) for word, stem in (line.split("\t") for line in lines)]


def _load_generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("generate_stem_golden",
                                                  ROOT / "tools" / "generate_stem_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["among.py", "basestemmer.py", "english_stemmer.py"])
def test_vendored_files_are_the_upstream_bytes_their_header_names(name: str) -> None:
    head, body = (VENDORED / name).read_bytes().split(MARKER)
    digest = re.search(rb"upstream sha256: ([0-9a-f]{64})", head)
    assert digest is not None
    assert hashlib.sha256(body).hexdigest() == digest.group(1).decode()


def test_the_vendored_stemmer_reproduces_the_golden_stems() -> None:
    pairs = golden_pairs()
    assert len(pairs) == 22860
    stems = EnglishStemmer(compiled=False).stem_words([w for w, _ in pairs])
    assert [(w, s) for (w, _), s in zip(pairs, stems, strict=True)] == pairs


def test_the_compiled_path_is_taken_only_when_it_is_the_same_release_and_agrees() -> None:
    assert compiled_agrees()  # PyStemmer 3.1.0 is a pinned dependency
    pairs = golden_pairs()
    assert EnglishStemmer().stem_words([w for w, _ in pairs]) == [s for _, s in pairs]


class _OtherRelease:
    """A PyStemmer whose English stems one probe word differently (another Snowball)."""

    @staticmethod
    def version() -> str:
        return SNOWBALL_VERSION

    class Stemmer:
        def __init__(self, algorithm: str) -> None:
            self.algorithm = algorithm

        def stemWords(self, words: list[str]) -> list[str]:
            return ["ad" if w == "added" else w for w in words]


def test_another_pystemmer_release_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled_agrees.cache_clear()
    monkeypatch.setitem(sys.modules, "Stemmer", _OtherRelease)
    try:
        assert not compiled_agrees()
        assert EnglishStemmer().stem("added") == "add"  # the vendored stem, not "ad"
        monkeypatch.setitem(sys.modules, "Stemmer", None)  # not installed at all
        compiled_agrees.cache_clear()
        assert not compiled_agrees() and EnglishStemmer().stem("added") == "add"
    finally:
        compiled_agrees.cache_clear()


def test_pystemmer_3_1_agrees_with_the_golden_stems() -> None:
    stemmer = pytest.importorskip("Stemmer")
    from importlib.metadata import version

    if not version("PyStemmer").startswith("3.1."):
        pytest.skip(f"PyStemmer {version('PyStemmer')} is installed; the golden list is 3.1's")
    pairs = golden_pairs()
    assert stemmer.Stemmer("english").stemWords([w for w, _ in pairs]) == [s for _, s in pairs]


def test_the_golden_words_are_the_distinct_tokens_of_the_shared_collections() -> None:
    datasets = SHARED / "datasets"
    if not (datasets / "npl" / "corpus.jsonl").exists():
        pytest.skip(f"the shared collections are not at {datasets}")
    generator = _load_generator()
    assert GOLDEN.read_text(encoding="utf-8") == generator.render(
        generator.distinct_tokens(datasets))


def test_a_tiny_memo_gives_the_same_stems_as_a_large_one() -> None:
    words = [w for w, _ in golden_pairs()[::97]] * 3
    assert EnglishStemmer(memo_size=4).stem_words(words) == EnglishStemmer().stem_words(words)


def test_memo_hits_skip_the_generated_code() -> None:
    stemmer = EnglishStemmer()
    assert stemmer.stem("connections") == stemmer.stem("connections") == "connect"
    assert stemmer.stem.cache_info().hits == 1  # type: ignore[attr-defined]
