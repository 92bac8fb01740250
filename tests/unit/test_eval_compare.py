"""``rookhaven eval`` over several collections and engines: one table, paired tests, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rookhaven.cli.main import main
from rookhaven.evaluation.significance import paired_p
from tests.unit.test_metrics import _collection


def test_two_engines_on_two_collections_give_one_json_report_with_p_values(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _collection(tmp_path / "alpha"), _collection(tmp_path / "beta")
    assert main(["eval", str(a), str(b), "--engine", "bm25@2", "--engine", "tfcosine@1",
                 "--param", "k1=0.9", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["engines"] == ["bm25@2", "tfcosine@1"] and report["baseline"] == "bm25@2"
    assert set(report["collections"]) == {"alpha", "beta"}
    cell = report["collections"]["alpha"]["tfcosine@1"]
    assert {"ndcg@10", "ndcg@10:delta", "ndcg@10:p", "recall@100:p", "queries"} <= set(cell)
    assert 0.0 <= cell["ndcg@10:p"] <= 1.0 and cell["queries"] == 3
    # k1 only reaches the engine that takes it.
    assert report["params"] == {"bm25@2": {"k1": 0.9}, "tfcosine@1": {}}


def test_the_table_has_a_row_per_collection_and_metric_and_a_mean(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _collection(tmp_path / "alpha")
    assert main(["eval", str(a), "--engine", "bm25@1", "--engine", "bm25@3",
                 "--metric", "ndcg@10", "--test", "permutation"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["collection", "metric", "bm25@1", "bm25@3", "bm25@3-bm25@1", "p"]
    assert [line.split()[0] for line in lines[2:4]] == ["alpha", "mean"]
    assert "permutation" in lines[-1]


def test_a_parameter_no_compared_engine_takes_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _collection(tmp_path / "alpha")
    assert main(["eval", str(a), "--engine", "bm25@2", "--engine", "tfcosine@1",
                 "--param", "fb_docs=5"]) == 2
    assert "fb_docs" in capsys.readouterr().err
    assert main(["eval", str(a), "--engine", "bm25@2", "--engine", "bm25@3",
                 "--param", "bm25@3:fb_docs=5", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["bm25@3"] == {"fb_docs": 5}
    assert main(["eval", str(a), "--engine", "bm25@2", "--param", "tfcosine@1:k1=1"]) == 2
    assert ("names tfcosine@1, which is not compared here (bm25@2); add --engine tfcosine@1"
            in capsys.readouterr().err)


def test_paired_tests_are_scipy_s_and_identical_samples_give_one() -> None:
    from scipy import stats
    a, b = [0.1, 0.5, 0.9, 0.3, 0.7], [0.2, 0.4, 0.6, 0.1, 0.5]
    assert paired_p(a, b) == pytest.approx(float(stats.ttest_rel(a, b).pvalue))
    assert paired_p(a, a) == 1.0 and paired_p(a, a, "permutation") == 1.0
    assert paired_p(a, b, "permutation") == paired_p(a, b, "permutation")  # fixed seed


def test_by_genre_groups_collections_by_their_meta_and_a_bad_meta_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, c = (_collection(tmp_path / n) for n in ("alpha", "beta", "gamma"))
    (a / "meta.json").write_text('{"genre": "catalog"}')
    (b / "meta.json").write_text('{"genre": "ad-hoc"}')
    assert main(["eval", str(a), str(b), str(c), "--engine", "bm25@2", "--engine", "bm25@4",
                 "--by-genre", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["genres"] == {"alpha": "catalog", "beta": "ad-hoc", "gamma": "unlabelled"}
    assert list(report["by_genre"]) == ["ad-hoc", "catalog", "unlabelled"]
    alpha = report["collections"]["alpha"]["bm25@4"]["ndcg@10"]
    assert report["by_genre"]["catalog"]["mean"]["bm25@4"]["ndcg@10"] == alpha
    assert main(["eval", str(a), "--by-genre", "--metric", "ndcg@10"]) == 0
    assert "mean catalog" in capsys.readouterr().out
    (a / "meta.json").write_text('{"genre": 3}')
    assert main(["eval", str(a), "--by-genre"]) == 2
    assert "'genre' must be a non-empty string" in capsys.readouterr().err
    (a / "meta.json").write_text("[1]")
    assert main(["eval", str(a), "--by-genre"]) == 2
    assert "meta.json must be one JSON object" in capsys.readouterr().err


def test_held_out_sets_group_apart_and_a_meta_file_labels_collections_without_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _collection(tmp_path / "alpha"), _collection(tmp_path / "beta")
    (a / "meta.json").write_text('{"genre": "catalog", "held_out": true}')
    meta = tmp_path / "meta.json"
    meta.write_text('{"beta": {"genre": "catalog"}}')
    assert main(["eval", str(a), str(b), "--by-genre", "--meta", str(meta),
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["genres"] == {"alpha": "catalog (held out)", "beta": "catalog"}
    assert report["by_genre"]["catalog"]["collections"] == ["beta"]
    assert main(["eval", str(a), "--meta", str(meta)]) == 2
    assert "--by-genre" in capsys.readouterr().err
