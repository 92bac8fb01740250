"""The compiled ASCII token pass gives the string path's tokens and the same index."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rookhaven.core import asciitokens, compiled
from rookhaven.core import index as index_module
from rookhaven.core.analyzer import Analyzer
from rookhaven.core.asciitokens import byte_table, classes
from rookhaven.core.corpus import Corpus
from rookhaven.core.index import InvertedIndex, build_index

pytestmark = pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")

ASCII = [chr(c) for c in range(128)]


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = ["Crane", "crane", "CRANE", "tide", "x", "a1b2", "99", "_under", "it's", "e-mail"]
    made = []
    for _ in range(n):
        parts = [rng.choice(words) if rng.random() < 0.6 else
                 "".join(rng.choices(ASCII, k=rng.randint(1, 12)))
                 for _ in range(rng.randint(0, 20))]
        made.append(rng.choice([" ", "", "\t", "\x1c", ".", "\n"]).join(parts))
    return made


def test_classes_give_every_token_the_string_path_finds() -> None:
    analyzer = Analyzer()
    table = byte_table(analyzer.ascii_gaps)
    sample = [*texts(500, seed=3), "", "   ", "ONE", "\x00\x7f"]
    grouped = classes(sample, table)
    assert grouped is not None
    names, token_class, counts = grouped
    assert len(set(names)) == len(names)
    tokens = [names[c] for c in token_class.tolist()]
    at = 0
    for text, count in zip(sample, counts.tolist(), strict=True):
        assert tokens[at: at + count] == analyzer.split_tokens(text), text
        at += count
    assert at == len(tokens)


def test_a_text_past_ascii_or_a_held_process_takes_the_string_path() -> None:
    table = byte_table(Analyzer().ascii_gaps)
    assert classes(["crane", "café"], table) is None
    compiled.hold()
    try:
        assert classes(["crane"], table) is None
    finally:
        compiled.release()


def test_texts_past_int32_positions_take_the_string_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    table = byte_table(Analyzer().ascii_gaps)
    monkeypatch.setattr(asciitokens, "_MAX_BYTES", 11)
    assert classes(["crane", "tide"], table) is not None  # "crane\ntide\n": 11 bytes
    assert classes(["crane tide", "quay"], table) is None  # 16 bytes


def test_a_hash_collision_is_detected_never_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the prime zero every token hashes alike: the pure-Python pass must notice that
    # "crane" and "tide" differ, and say so, rather than count them as one token.
    monkeypatch.setattr(asciitokens, "_FNV_PRIME", np.uint64(0))
    table = byte_table(Analyzer().ascii_gaps)
    buf = np.frombuffer(b"crane crane tide\n", dtype=np.uint8)
    out = [np.zeros(3, dtype=np.int32) for _ in range(3)]
    counts = np.zeros(1, dtype=np.int64)
    bounds = np.array([0, len(buf)], dtype=np.int64)
    assert asciitokens._classes(buf, table, bounds, counts, *out) == -1
    same = np.frombuffer(b"crane CRANE\n", dtype=np.uint8)
    assert asciitokens._classes(same, table, np.array([0, len(same)]), counts, *out) == 1
    # Through the builder: the compiled functions replaced by that colliding pass, the
    # chunk falls back to the string path and the index is the same.
    monkeypatch.setattr(asciitokens, "_CLASSES", asciitokens._classes)
    monkeypatch.setattr(asciitokens, "_COUNT", asciitokens._count)
    corpus = Corpus.from_records({"id": f"d{i}", "text": t} for i, t in
                                 enumerate(["crane tide", "crane", "tide tide x"]))
    assert _same(build_index(corpus, Analyzer()), _held_build(corpus, Analyzer()))


def _held_build(corpus: Corpus, analyzer: Analyzer) -> InvertedIndex:
    compiled.hold()
    try:
        return build_index(corpus, analyzer)
    finally:
        compiled.release()


def _same(a: InvertedIndex, b: InvertedIndex) -> bool:
    return (a.vocabulary == b.vocabulary and np.array_equal(a.offsets, b.offsets)
            and np.array_equal(a.docs, b.docs) and np.array_equal(a.tfs, b.tfs)
            and np.array_equal(a.lengths, b.lengths))


@pytest.mark.parametrize("analyzer", [Analyzer(), Analyzer(stemmer="english"),
                                      Analyzer(stopwords="none"),
                                      Analyzer(stemmer="english", identifiers="split")])
def test_the_index_is_the_same_on_both_paths_with_fields_and_mixed_text(
        analyzer: Analyzer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "CHUNK_DOCS", 700)  # several chunks, new tokens in each
    rng = random.Random(11)
    body = texts(2500, seed=5)
    records = []
    for i, text in enumerate(body):
        record: dict[str, object] = {"id": f"d{i:05d}", "text": text}
        if i % 3 == 0:
            record["fields"] = {"title": rng.choice(body), "tags": "crane Ünïcode tide"}
        if i % 11 == 0:
            record["text"] = text + " Kräne ﬁsh ǅ"
        records.append(record)
    corpus = Corpus.from_records(records)
    weights = {"title": 2.0, "tags": 0.5}
    live = build_index(corpus, analyzer, weights)
    compiled.hold()
    try:
        held = build_index(corpus, analyzer, weights)
    finally:
        compiled.release()
    assert _same(live, held)
