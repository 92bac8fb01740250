"""Our metrics agree with ir-measures (trec_eval) on random runs, and the eval command works."""

from __future__ import annotations

import json
import random
from pathlib import Path

import ir_measures
import pytest
from ir_measures import MRR, R, Success, nDCG

from rookhaven.cli.main import main
from rookhaven.evaluation.metrics import evaluate_run

MEASURES = {"ndcg@10": nDCG @ 10, "recall@1": R @ 1, "recall@5": R @ 5, "recall@20": R @ 20,
            "recall@100": R @ 100, "mrr@10": MRR @ 10, "success@1": Success @ 1,
            "success@5": Success @ 5, "success@20": Success @ 20}


@pytest.mark.parametrize("seed", range(5))
def test_metrics_agree_with_ir_measures(seed: int) -> None:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(150)]
    qrels = {f"q{q}": {d: rng.choice([0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 30))}
             for q in range(20)}
    qrels = {q: j for q, j in qrels.items() if any(g > 0 for g in j.values())}
    run = {q: rng.sample(docs, rng.randint(1, 120)) for q in qrels}
    ours = evaluate_run(run, qrels)
    trec_run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in run.items()}
    theirs = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, trec_run)
    for name, measure in MEASURES.items():
        assert ours[name] == pytest.approx(theirs[measure], abs=1e-12), name


def test_a_query_with_an_empty_ranking_counts_as_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    assert evaluate_run({"q1": ["a"]}, qrels)["success@1"] == 0.5


def _collection(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    docs = [{"_id": "d1", "title": "Tide tables", "text": "tide heights for pilots"},
            {"_id": "d2", "title": "Cranes", "text": "crane maintenance"},
            {"_id": "d3", "title": "", "text": "berth allocation and tides"}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": "1", "text": "tide tables"}, {"_id": "2", "text": "crane repair"},
               {"_id": "3", "text": "zebra"}]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t2\n1\td3\t1\n"
                                             "2\td2\t1\n3\td1\t1\n")
    return root


def test_eval_prints_exactly_the_metric_keys_and_writes_a_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path / "c")
    run_file = tmp_path / "run.txt"
    assert main(["eval", str(root), "--provider", "bm25", "--format", "json",
                 "--run-out", str(run_file)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"ndcg@10", "recall@1", "recall@5", "recall@20", "recall@100",
                           "mrr@10", "success@1", "success@5", "success@20", "empty_queries",
                           "unknown_judged_queries", "judged_documents_not_in_corpus"}
    assert report["empty_queries"] == 1 and report["success@1"] == pytest.approx(2 / 3)
    lines = run_file.read_text().splitlines()
    assert lines[0].split() == ["1", "Q0", "d1", "1", lines[0].split()[4], "rookhaven-bm25"]


def test_eval_with_a_split_scores_only_the_listed_queries(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path / "c")
    split = tmp_path / "seen.txt"
    split.write_text("1\n")
    assert main(["eval", str(root), "--provider", "bm25", "--format", "json",
                 "--queries-split", str(split), "--no-decompose"]) == 0
    assert json.loads(capsys.readouterr().out)["ndcg@10"] == pytest.approx(1.0)
    split.write_text("nope\n")
    assert main(["eval", str(root), "--queries-split", str(split)]) == 2
