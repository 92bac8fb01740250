#!/usr/bin/env python3
"""Rookhaven's bm25 against bm25s, tantivy and rank_bm25: quality and speed, run by hand.

    python bench/ranking.py quality [--datasets ../shared/datasets] [--engine REF ...]
        [COLLECTION_DIR ...]
    python bench/ranking.py speed bench/data/syn100k [--engines rookhaven,bm25s,...]
        [--passes 3] [--rounds 1] [--gc freeze|as-is]

``speed`` runs every engine in its own process (so peak memory is that engine's alone) on a
corpus made by ``../shared/bench/make_synthetic.py OUT N``: it reports load and build time,
peak resident memory, and single-query throughput for q3/q8 x top-10/top-100. Rookhaven
answers with the full retrieve (decomposition, ranking and the audit record): engine
``rookhaven`` produces the canonical result bytes a worker stores, ``rookhaven-model`` the
validated pydantic ``RetrievalResult`` of ``Retriever.retrieve``; ``rookhaven:NAME@VERSION``
(e.g. ``--engines rookhaven:bm25@1,rookhaven:bm25@2``) ranks with that engine version, and
``rookhaven:hybrid@1+semantic_prefilter=250`` with its parameters changed;
``rookhaven-cold:bm25@3`` is ``rookhaven`` with bm25@3's feedback memo emptied before every
query, so each pass pays the first retrieval and the term choice (the memo would otherwise
answer every pass after the first). Peers
are asked one query per call and return ids. Missing peers are reported as such, never faked.

After building, every engine's process freezes what it holds (``gc.freeze``, ``--gc
freeze``, the default), as a Rookhaven worker does before it forks its pool: the collector
then never walks the loaded corpus and the index while queries run. ``--gc as-is`` leaves
the collector alone, as a process that embeds ``Retriever`` without freezing has it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import peers  # noqa: E402
from peers import Search, build_bm25s, build_tantivy  # noqa: E402

from rookhaven import Document, RetrievalRequest, Retriever  # noqa: E402
from rookhaven.core.corpus import Corpus  # noqa: E402
from rookhaven.core.corpusstream import CorpusStream  # noqa: E402
from rookhaven.errors import CorpusError  # noqa: E402
from rookhaven.evaluation import evaluate_run, load_collection  # noqa: E402

DATASETS = ("cranfield", "cisi", "cacm", "npl")
SPEED_ENGINES = ("rookhaven", "rookhaven-model", "bm25s", "bm25s-numba", "tantivy")


def rss_mb() -> float:
    """Current resident memory of this process, MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ----- peers: bench/peers.py; rank_bm25 here gets Rookhaven's analyzer -----

def build_rank_bm25(ids: list[str], texts: list[str]) -> Search:
    from rookhaven.core.analyzer import Analyzer
    analyzer = Analyzer(stemmer="english")  # the same terms we use: the gap left is the formula
    return peers.build_rank_bm25(ids, [analyzer.terms(t) for t in texts], analyzer.terms)


def build_rookhaven(documents: Corpus | CorpusStream | list[Document], decompose: bool = True,
                    *, models: bool = True, engine: str = "bm25", cold: bool = False,
                    **params: object) -> Search:
    """Rookhaven's full retrieve: decomposition, ranking, audit record. With ``models``, the
    validated pydantic result (``Retriever.retrieve``), its ids returned; without, the
    canonical result and audit bytes a worker stores (``Retriever.result_bytes``), for speed
    runs only: no ids are read back from them (an empty list)."""
    retriever = Retriever(documents, engine, **params)
    memo = getattr(retriever.index, "_feedback", None) if cold else None

    def search(query: str, k: int) -> list[str]:
        if memo is not None:
            memo.clear()
        request = RetrievalRequest(query=query, recall_budget=k, decompose=decompose)
        if models:
            return [h.id for h in retriever.retrieve(request).hits]
        retriever.result_bytes(request)  # what a worker stores; speed runs read no ids back
        return []
    return search


# ----- quality -----

def quality(paths: list[Path], engines: list[str]) -> None:
    """nDCG@10 of each system on each collection directory (BEIR layout)."""
    systems: dict[str, Callable[[list[Document], list[str], list[str]], Search]] = {
        "rookhaven bm25 (default)": lambda d, i, t: build_rookhaven(d),
        **{f"rookhaven {ref}": (lambda d, i, t, ref=ref: build_rookhaven(d, engine=ref))
           for ref in engines},
        "rookhaven bm25 --no-decompose": lambda d, i, t: build_rookhaven(d, decompose=False),
        "rookhaven bm25@3": lambda d, i, t: build_rookhaven(d, engine="bm25@3"),
        "bm25s (stemming)": lambda d, i, t: build_bm25s(i, t, stem=True),
        "bm25s (default)": lambda d, i, t: build_bm25s(i, t),
        "tantivy (en_stem)": lambda d, i, t: build_tantivy(i, t),
        "rank_bm25 (our analyzer)": lambda d, i, t: build_rank_bm25(i, t),
    }
    table: dict[str, dict[str, float | None]] = {name: {} for name in systems}
    names = [path.name for path in paths]
    for name, path in zip(names, paths, strict=True):
        collection = load_collection(path, max_docs=10**7)
        ids = [d.id for d in collection.documents]
        texts = [" ".join([*(d.fields[f] for f in sorted(d.fields)), d.text])
                 for d in collection.documents]
        for system, make in systems.items():
            try:
                search = make(collection.documents, ids, texts)
            except ImportError as exc:
                print(f"{system}: not available ({exc})", file=sys.stderr)
                table[system][name] = None
                continue
            run = {q: search(text, 100) for q, text in collection.queries.items()}
            table[system][name] = evaluate_run(run, collection.qrels)["ndcg@10"]
    print("| nDCG@10 | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for system, row in table.items():
        cells = ["n/a" if row[d] is None else f"{row[d]:.3f}" for d in names]
        print(f"| {system} | " + " | ".join(cells) + " |")


# ----- speed -----

def _read_queries(path: Path) -> list[str]:
    return [orjson.loads(line)["text"] for line in path.read_bytes().splitlines() if line]


def _value(text: str) -> object:
    """A parameter's value from an engine name: an int, a float, or the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def speed_one(engine: str, corpus_dir: Path, passes: int = 3,
              freeze: bool = True) -> dict[str, object]:
    """Load, build and query one engine in this process; the numbers as a dict."""
    start = time.perf_counter()
    streamed = False
    if engine.startswith("rookhaven"):
        # "rookhaven:bm25@1" names an engine version; plain "rookhaven" is the default one.
        kind, _, version = engine.partition(":")
        # "rookhaven:hybrid@1+semantic_prefilter=250": the engine with parameters changed.
        version, *pairs = version.split("+")
        params: dict[str, Any] = {name: _value(text)
                                  for name, _, text in (p.partition("=") for p in pairs)}
        # Streamed into the index, as a worker loads a stored corpus: each line is parsed,
        # hashed and dropped, so reading the file is part of the build (load_s 0). A file
        # not in id order cannot stream; it is read whole first.
        try:
            with open(corpus_dir / "corpus.jsonl", "rb") as lines:
                source: Any = CorpusStream.from_records(
                    {"id": r["_id"], "text": r["text"]} for r in map(orjson.loads, lines))
                loaded, load_rss = 0.0, rss_mb()
                search: Search = build_rookhaven(source, models=kind == "rookhaven-model",
                                                 engine=version or "bm25",
                                                 cold=kind == "rookhaven-cold", **params)
                streamed = True
        except CorpusError:
            with open(corpus_dir / "corpus.jsonl", "rb") as lines:
                source = Corpus.from_records({"id": r["_id"], "text": r["text"]}
                                             for r in map(orjson.loads, lines))
            loaded, load_rss = time.perf_counter() - start, rss_mb()
            start = time.perf_counter()
            search = build_rookhaven(source, models=kind == "rookhaven-model",
                                     engine=version or "bm25", cold=kind == "rookhaven-cold",
                                     **params)
    else:
        ids, texts = [], []
        with open(corpus_dir / "corpus.jsonl", "rb") as lines:
            for r in map(orjson.loads, lines):
                ids.append(r["_id"])
                texts.append(r["text"])
        loaded, load_rss = time.perf_counter() - start, rss_mb()
        start = time.perf_counter()
        if engine == "bm25s":
            search = build_bm25s(ids, texts)
        elif engine == "bm25s-numba":
            search = build_bm25s(ids, texts, backend="numba")
        elif engine == "tantivy":
            search = build_tantivy(ids, texts)
        else:
            raise SystemExit(f"unknown engine {engine!r}; choose from {', '.join(SPEED_ENGINES)}")
    built, build_peak = time.perf_counter() - start, peak_mb()
    if freeze:
        gc.freeze()
    out: dict[str, object] = {"engine": engine, "load_s": round(loaded, 1),
                              "rss_after_load_mb": round(load_rss), "build_s": round(built, 1),
                              "peak_after_build_mb": round(build_peak), "streamed": streamed}
    for name in ("q3", "q8"):
        queries = _read_queries(corpus_dir / f"{name}.jsonl")
        search(queries[0], 10)  # warm-up (compilation, caches)
        for k in (10, 100):
            # The fastest of several passes: on a shared machine noise only ever slows a pass.
            fastest = float("inf")
            for _ in range(passes):
                start = time.perf_counter()
                for q in queries:
                    search(q, k)
                fastest = min(fastest, time.perf_counter() - start)
            out[f"{name}@{k}"] = round(len(queries) / fastest)
    out["peak_mb"] = round(peak_mb())
    return out


SPEED_KEYS = ("load_s", "build_s", "peak_mb", "q3@10", "q3@100", "q8@10", "q8@100")


def _best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One engine's rounds combined: fastest times and rates, highest memory."""
    best = dict(rows[0])
    for row in rows[1:]:
        for key in SPEED_KEYS:
            pick = min if key.endswith("_s") else max
            best[key] = pick(best[key], row[key])
    return best


def speed(corpus_dir: Path, engines: list[str], passes: int, rounds: int,
          gc_mode: str = "freeze") -> None:
    runs: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
    for _ in range(rounds):  # engines alternate, so a slow spell of the machine hits them all
        for engine in engines:
            proc = subprocess.run([sys.executable, __file__, "_speed_one", engine,
                                   str(corpus_dir), "--passes", str(passes),
                                   "--gc", gc_mode],
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
                print(f"{engine}: failed: {tail}", file=sys.stderr)
                continue
            runs[engine].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(json.dumps(runs[engine][-1]), file=sys.stderr)
    print(f"corpus: {corpus_dir} (best of {passes} passes, {rounds} round(s), gc {gc_mode})")
    print("| engine | " + " | ".join(SPEED_KEYS) + " |")
    print("|---|" + "---:|" * len(SPEED_KEYS))
    for engine, rows in runs.items():
        if rows:
            row = _best(rows)
            print(f"| {engine} | " + " | ".join(str(row[k]) for k in SPEED_KEYS) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets",
                   help="where the four shared collections are (when no directory is given)")
    q.add_argument("--engine", action="append", default=[],
                   help="also rank with this Rookhaven engine version (repeatable)")
    q.add_argument("collections", nargs="*", type=Path,
                   help="collection directories (default: the four shared ones)")
    s = sub.add_parser("speed")
    s.add_argument("corpus", type=Path)
    s.add_argument("--engines", default=",".join(SPEED_ENGINES))
    s.add_argument("--passes", type=int, default=3, help="query passes per engine; best kept")
    s.add_argument("--rounds", type=int, default=1,
                   help="times the engine list is run, alternating; best kept")
    one = sub.add_parser("_speed_one")
    one.add_argument("engine")
    one.add_argument("corpus", type=Path)
    one.add_argument("--passes", type=int, default=3)
    for p in (s, one):
        p.add_argument("--gc", choices=("freeze", "as-is"), default="freeze",
                       help="freeze each engine's objects once it is built (default)")
    args = parser.parse_args()
    if args.cmd == "quality":
        quality(args.collections or [args.datasets / name for name in DATASETS], args.engine)
    elif args.cmd == "speed":
        speed(args.corpus, args.engines.split(","), args.passes, args.rounds, args.gc)
    else:
        print(json.dumps(speed_one(args.engine, args.corpus, args.passes,
                                   freeze=args.gc == "freeze")))


if __name__ == "__main__":
    main()
