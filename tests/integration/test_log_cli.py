"""``rookhaven log``, ``result`` and ``verify --checkpoint`` in subprocesses on a real Redis:
keys, signed checkpoints, proofs that verify, refused bytes, and every log attack named."""

from __future__ import annotations

import base64
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store
from rookhaven.transparency import merkle
from rookhaven.transparency.leaf import parse_leaf
from rookhaven.transparency.note import verifier_of, verify_checkpoint
from tests.conftest import ROOT
from tests.results_support import forget_job

DOCS = [Document(id=f"d{i:03d}", text=f"crane {i % 7} berth {i % 5} tide {i % 3} reefer delay")
        for i in range(60)]
NAME = "rookhaven.test/log"


def rookhaven(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def add_results(pipe: Pipeline, n: int, tag: str) -> list[str]:
    """Store ``n`` new results in process (Pipeline + Executor); their result keys."""
    refs = pipe.submit_many([RetrievalRequest(query=f"crane {i % 7} and tide {i % 3}",
                                              seed=f"{tag}{i}") for i in range(n)], "port")
    Executor(pipe.store, pipe.settings).run([r.job_id for r in refs], "test")
    return [r.result_key for r in refs]


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a refused command (never a traceback)."""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def b64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


@pytest.fixture
def pipeline(env: dict[str, str]) -> Iterator[Pipeline]:
    settings = Settings.from_mapping(env)
    store = Store.from_settings(settings)
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus(DOCS, "port")
    add_results(pipe, 20, "s")
    yield pipe
    store.close()


@pytest.fixture
def key(env: dict[str, str], tmp_path: Path) -> tuple[Path, str]:
    """A signing key written by `rookhaven log keygen`: (its file, its verifier key)."""
    path = tmp_path / "log.key"
    done = rookhaven(env, "log", "keygen", NAME, "--out", str(path))
    assert done.returncode == 0, done.stderr
    return path, done.stdout.strip()


@pytest.fixture
def signer(env: dict[str, str], key: tuple[Path, str]) -> dict[str, str]:
    """The environment of a process that holds the signing key."""
    return {**env, "ROOKHAVEN_LOG_KEY_FILE": str(key[0])}


def private(key: tuple[Path, str]) -> str:
    return key[0].read_text(encoding="utf-8").strip()


def no_secret(key: tuple[Path, str], *runs: subprocess.CompletedProcess[str]) -> None:
    """The private key (or its base64 seed) is in no output and no error of ``runs``."""
    secret = private(key)
    seed = secret.split("+", 4)[4]  # base64 may itself hold a "+"
    for done in runs:
        for stream in (done.stdout, done.stderr):
            assert secret not in stream and seed not in stream


def checkpoint(signer: dict[str, str], key: tuple[Path, str], out: Path | None = None) -> str:
    done = rookhaven(signer, "log", "checkpoint")
    assert done.returncode == 0, done.stderr
    no_secret(key, done)
    if out is not None:
        out.write_text(done.stdout, encoding="utf-8")
    return done.stdout


# ----- keygen -------------------------------------------------------------------------


def test_keygen_writes_a_private_file_and_prints_only_the_verifier_key(
        env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "k"
    done = rookhaven(env, "log", "keygen", NAME, "--out", str(path))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    secret = path.read_text(encoding="utf-8").strip()
    assert secret.startswith(f"PRIVATE+KEY+{NAME}+")
    assert done.stdout == verifier_of(secret) + "\n"
    name, key_id, _ = done.stdout.strip().split("+", 2)
    assert (name, len(key_id)) == (NAME, 8)
    no_secret((path, ""), done)

    again = rookhaven(env, "log", "keygen", NAME, "--out", str(path))
    assert again.returncode == 2
    assert "exists" in one_line_error(again)
    assert path.read_text(encoding="utf-8").strip() == secret
    no_secret((path, ""), again)


# ----- checkpoint and checkpoints -----------------------------------------------------


def test_checkpoint_signs_the_log_once_per_size_and_anew_after_it_grows(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str]) -> None:
    first = checkpoint(signer, key)
    signed = verify_checkpoint(first, key[1])
    assert signed.origin == NAME
    assert signed.size == pipeline.store.log.size() == 20
    assert signed.root == pipeline.store.log.root(20)

    assert checkpoint(signer, key) == first
    assert len(pipeline.store.checkpoints.since()) == 1

    add_results(pipeline, 3, "more")
    second = checkpoint(signer, key)
    assert second != first and verify_checkpoint(second, key[1]).size == 23
    assert [note for _, note in pipeline.store.checkpoints.since()] == [first, second]


def test_checkpoint_without_a_key_or_a_stored_checkpoint_is_a_one_line_error(
        pipeline: Pipeline, env: dict[str, str]) -> None:
    done = rookhaven(env, "log", "checkpoint")
    # NotFoundError is an InputError, so this exits 2 (the project's "bad input" status).
    assert done.returncode == 2
    assert done.stdout == ""
    assert "no checkpoint has been signed yet" in one_line_error(done)


def test_checkpoint_without_a_key_prints_the_latest_stored_one(
        pipeline: Pipeline, env: dict[str, str], signer: dict[str, str],
        key: tuple[Path, str]) -> None:
    note = checkpoint(signer, key)
    add_results(pipeline, 2, "later")
    done = rookhaven(env, "log", "checkpoint")
    assert (done.returncode, done.stdout) == (0, note)


def test_checkpoints_exports_one_json_line_each_and_since_filters(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str]) -> None:
    first = checkpoint(signer, key)
    add_results(pipeline, 2, "more")
    second = checkpoint(signer, key)
    done = rookhaven(signer, "log", "checkpoints")
    assert done.returncode == 0, done.stderr
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [row["note"] for row in rows] == [first, second]
    assert all(set(row) == {"signed_at", "note"} for row in rows)
    assert rows[0]["signed_at"] < rows[1]["signed_at"]

    since = rookhaven(signer, "log", "checkpoints", "--since", repr(rows[1]["signed_at"]))
    assert [orjson.loads(line)["note"] for line in since.stdout.splitlines()] == [second]
    later = rookhaven(signer, "log", "checkpoints", "--since", str(rows[1]["signed_at"] + 1))
    assert (later.returncode, later.stdout) == (0, "")
    no_secret(key, done, since, later)


# ----- prove and consistency ----------------------------------------------------------


def proves(found: dict[str, Any]) -> bool:
    """Recompute the inclusion proof from the printed fields alone."""
    leaf = found["leaf"].encode()
    assert b64(found["leaf_hash"]) == merkle.leaf_hash(leaf)
    return merkle.verify_inclusion(found["leaf_index"], found["tree_size"],
                                   merkle.leaf_hash(leaf), [b64(p) for p in found["proof"]],
                                   b64(found["root"]))


def test_prove_prints_a_proof_that_verifies_from_its_own_fields(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str]) -> None:
    note = checkpoint(signer, key)
    target = sorted(pipeline.store.results.keys())[7]
    done = rookhaven(signer, "log", "prove", target)
    assert done.returncode == 0, done.stderr
    found = orjson.loads(done.stdout)
    assert found["key"] == target and found["tree_size"] == 20
    assert found["checkpoint"] == note and found["verified"] is True
    assert b64(found["root"]) == verify_checkpoint(note, key[1]).root
    assert parse_leaf(found["leaf"].encode()).key == target
    assert proves(found)


def test_prove_against_an_older_saved_checkpoint_uses_its_tree(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str],
        tmp_path: Path) -> None:
    old = tmp_path / "old.checkpoint"
    checkpoint(signer, key, old)
    early = [data for _, data in pipeline.store.log.leaves(0, 20)]
    late = add_results(pipeline, 9, "late")
    checkpoint(signer, key)

    target = parse_leaf(early[13]).key
    done = rookhaven(signer, "log", "prove", target, "--checkpoint", str(old))
    assert done.returncode == 0, done.stderr
    found = orjson.loads(done.stdout)
    assert (found["tree_size"], found["leaf_index"]) == (20, 13)
    assert b64(found["root"]) == verify_checkpoint(old.read_text(), key[1]).root
    assert proves(found)

    newer = rookhaven(signer, "log", "prove", late[0], "--checkpoint", str(old))
    assert newer.returncode == 2
    assert "newer checkpoint" in one_line_error(newer)
    assert proves(orjson.loads(rookhaven(signer, "log", "prove", late[0]).stdout))


def test_prove_of_a_key_with_no_leaf_is_a_one_line_error(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str]) -> None:
    checkpoint(signer, key)
    missing = "sha256:" + "0" * 64
    done = rookhaven(signer, "log", "prove", missing)
    # NotFoundError is an InputError: exit 2, like `rookhaven job` of an unknown id.
    assert done.returncode == 2
    assert done.stdout == ""
    assert missing in one_line_error(done) and "no leaf" in done.stderr


@pytest.mark.slow
def test_consistency_between_sizes_and_between_checkpoint_files_verifies(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str],
        tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    checkpoint(signer, key, old)
    add_results(pipeline, 13, "grow")
    checkpoint(signer, key, new)
    old_cp = verify_checkpoint(old.read_text(), key[1])
    new_cp = verify_checkpoint(new.read_text(), key[1])
    assert (old_cp.size, new_cp.size) == (20, 33)

    for args in (("20", "33"), (str(old), str(new)), (str(old), "33"), ("7", "20")):
        done = rookhaven(signer, "log", "consistency", *args)
        assert done.returncode == 0, done.stderr
        found = orjson.loads(done.stdout)
        assert merkle.verify_consistency(found["old"], found["new"], b64(found["old_root"]),
                                         b64(found["new_root"]),
                                         [b64(p) for p in found["proof"]]), args
    # Checked against the signed roots, not only the ones the command printed.
    found = orjson.loads(rookhaven(signer, "log", "consistency", str(old), str(new)).stdout)
    assert merkle.verify_consistency(20, 33, old_cp.root, new_cp.root,
                                     [b64(p) for p in found["proof"]])

    backwards = rookhaven(signer, "log", "consistency", str(new), str(old))
    assert backwards.returncode == 2 and "older one first" in one_line_error(backwards)


def test_consistency_from_a_checkpoint_file_refuses_a_store_whose_tree_it_did_not_sign(
        pipeline: Pipeline, env: dict[str, str], signer: dict[str, str],
        key: tuple[Path, str], tmp_path: Path) -> None:
    old = tmp_path / "old"
    checkpoint(signer, key, old)
    store, k, k0 = pipeline.store, pipeline.store.keys, pipeline.store.keys.shards[0]
    store.client.delete(k0.log_leaves, k0.log_index, k.log_checkpoints,
                        *store.client.keys(f"{k.prefix}:log:hashes:*"))
    erase(pipeline, sorted(store.results.keys())[4])
    assert rookhaven(env, "log", "backfill").returncode == 0  # the 19 survivors, re-logged
    add_results(pipeline, 5, "cover")
    done = rookhaven(env, "log", "consistency", str(old), "24")
    found = orjson.loads(done.stdout) if done.returncode == 0 else None
    signed = verify_checkpoint(old.read_text(), key[1]).root
    assert found is None or b64(found["old_root"]) == signed, "printed a root nobody signed"


# ----- result -------------------------------------------------------------------------


def test_result_prints_logged_bytes_and_refuses_bytes_edited_in_redis(
        pipeline: Pipeline, env: dict[str, str]) -> None:
    target = sorted(pipeline.store.results.keys())[3]
    stored = pipeline.store.results.get(target)
    done = rookhaven(env, "result", target)
    assert (done.returncode, done.stdout.encode()) == (0, stored + b"\n")
    assert done.stderr == ""

    redis_key = pipeline.store.keys.result(target)
    at = stored.index(b'"rank":1')
    pipeline.store.client.set(redis_key, stored[:at] + b'"rank":4' + stored[at + 8:])
    refused = rookhaven(env, "result", target)
    assert refused.returncode == 1
    assert refused.stdout == ""
    line = one_line_error(refused)
    assert target in line and "not the ones logged" in line


# ----- verify against a pinned checkpoint ---------------------------------------------


def verify(env: dict[str, str], pin: Path, vkey: str) -> subprocess.CompletedProcess[str]:
    return rookhaven(env, "verify", "--all", "--checkpoint", str(pin), "--verifier-key", vkey)


def alarms(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    """(alarm class, key) of every alarm line the summary prints."""
    rows = [line.split() for line in done.stdout.splitlines() if line.lstrip().startswith("ALARM")]
    return sorted((words[1], words[2]) for words in rows)


@pytest.fixture
def pinned(pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str],
           tmp_path: Path) -> Path:
    """A checkpoint of the 20 results, kept outside Redis as an auditor would."""
    pin = tmp_path / "pinned.checkpoint"
    checkpoint(signer, key, pin)
    return pin


def erase(pipe: Pipeline, target: str) -> None:
    """Delete a result and every index entry that names it (result, audit, job, indexes)."""
    k, client = pipe.store.keys.shard(target), pipe.store.client
    digest = pipe.store.corpora.resolve("port")
    client.delete(k.result(target), k.audit(target))
    forget_job(pipe.store, target)
    client.zrem(k.audits_by_time, target)
    client.zrem(k.audits_by_corpus(digest), target)


def test_verify_against_the_pinned_checkpoint_is_clean_on_an_intact_store(
        pipeline: Pipeline, env: dict[str, str], signer: dict[str, str], key: tuple[Path, str],
        pinned: Path) -> None:
    done = verify(env, pinned, key[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "20 checked, 20 matched" in done.stdout and "0 alarms" in done.stdout
    add_results(pipeline, 4, "grown")  # growth after the pin stays consistent
    checkpoint(signer, key)
    grown = verify(env, pinned, key[1])
    assert grown.returncode == 0, grown.stdout + grown.stderr


def test_verify_names_a_result_erased_with_every_index_entry(
        pipeline: Pipeline, env: dict[str, str], key: tuple[Path, str], pinned: Path) -> None:
    victim = sorted(pipeline.store.results.keys())[5]
    erase(pipeline, victim)
    done = verify(env, pinned, key[1])
    assert done.returncode == 1
    assert alarms(done) == [("erased", victim), ("results-missing", "store")]


def test_verify_names_a_result_with_one_edited_byte(
        pipeline: Pipeline, env: dict[str, str], key: tuple[Path, str], pinned: Path) -> None:
    victim = sorted(pipeline.store.results.keys())[9]
    redis_key = pipeline.store.keys.result(victim)
    data = pipeline.store.client.get(redis_key)
    at = data.index(b'"rank":1')
    pipeline.store.client.set(redis_key, data[:at] + b'"rank":6' + data[at + 8:])
    done = verify(env, pinned, key[1])
    assert done.returncode == 1
    assert alarms(done) == [("mismatch", victim), ("rewritten", victim)]


def test_verify_reports_a_truncated_log_as_inconsistent(
        pipeline: Pipeline, env: dict[str, str], key: tuple[Path, str], pinned: Path) -> None:
    pipeline.store.client.rpop(pipeline.store.keys.shards[0].log_leaves)
    done = verify(env, pinned, key[1])
    assert done.returncode == 1
    assert ("log-inconsistent", "log") in alarms(done)
    assert "truncated" in done.stdout


def test_verify_names_the_result_whose_leaf_a_truncation_dropped(
        pipeline: Pipeline, env: dict[str, str], key: tuple[Path, str], pinned: Path) -> None:
    last = parse_leaf(pipeline.store.client.lindex(pipeline.store.keys.shards[0].log_leaves, -1))
    pipeline.store.client.rpop(pipeline.store.keys.shards[0].log_leaves)
    done = verify(env, pinned, key[1])
    assert last is not None and last.key in done.stdout


def test_verify_catches_a_log_rebuilt_and_signed_with_another_key(
        pipeline: Pipeline, env: dict[str, str], key: tuple[Path, str], pinned: Path,
        tmp_path: Path) -> None:
    store, k, k0 = pipeline.store, pipeline.store.keys, pipeline.store.keys.shards[0]
    victim = sorted(store.results.keys())[2]
    erase(pipeline, victim)
    store.client.delete(k0.log_leaves, k0.log_index, k.log_checkpoints,
                        *store.client.keys(f"{k.prefix}:log:hashes:*"))
    backfilled = rookhaven(env, "log", "backfill")
    assert backfilled.returncode == 0, backfilled.stderr
    other = tmp_path / "other.key"
    made = rookhaven(env, "log", "keygen", NAME, "--out", str(other))
    assert made.returncode == 0 and made.stdout.strip() != key[1]
    forged = rookhaven({**env, "ROOKHAVEN_LOG_KEY_FILE": str(other)}, "log", "checkpoint")
    assert forged.returncode == 0, forged.stderr

    done = verify(env, pinned, key[1])
    assert done.returncode == 1
    found = alarms(done)
    assert ("bad-signature", "log") in found and ("log-inconsistent", "log") in found


# ----- backfill -----------------------------------------------------------------------


def test_backfill_logs_results_stored_before_the_log_once_and_then_verifies_clean(
        pipeline: Pipeline, env: dict[str, str], signer: dict[str, str],
        key: tuple[Path, str], tmp_path: Path) -> None:
    store, k, k0 = pipeline.store, pipeline.store.keys, pipeline.store.keys.shards[0]
    stored = sorted(store.results.keys())
    store.client.delete(k0.log_leaves, k0.log_index, k.log_checkpoints,
                        *store.client.keys(f"{k.prefix}:log:hashes:*"))
    assert store.log.size() == 0
    warned = rookhaven(env, "result", stored[0])
    assert warned.returncode == 0 and "not in the transparency log" in warned.stderr

    done = rookhaven(env, "log", "backfill")
    assert done.returncode == 0, done.stderr
    assert "backfilled 20 result(s)" in done.stderr
    leaves = [parse_leaf(data) for _, data in store.log.leaves()]
    assert all(leaf is not None and leaf.backfilled for leaf in leaves)
    assert sorted(leaf.key for leaf in leaves if leaf) == stored
    for leaf in leaves:
        assert leaf is not None
        assert leaf.matches(store.results.get(leaf.key), store.results.audit(leaf.key))

    again = rookhaven(env, "log", "backfill")
    assert again.returncode == 0 and "backfilled 0 result(s)" in again.stderr
    assert store.log.size() == 20

    pin = tmp_path / "fresh.checkpoint"
    checkpoint(signer, key, pin)
    clean = verify(env, pin, key[1])
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "0 alarms" in clean.stdout


# ----- mirror -------------------------------------------------------------------------


@pytest.mark.slow
def test_log_mirror_then_verify_mirror_names_an_erased_result_and_accuses_no_other(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str],
        env: dict[str, str], tmp_path: Path) -> None:
    pinned_file = tmp_path / "pinned.cp"
    checkpoint(signer, key, pinned_file)
    mirror = tmp_path / "mirror"
    done = rookhaven(env, "log", "mirror", str(mirror))
    assert done.returncode == 0, done.stderr
    assert "mirrored 20 leaves" in done.stderr and "checkpoint of 20 leaves" in done.stderr
    assert (mirror / "checkpoint").read_text(encoding="utf-8") == pinned_file.read_text(
        encoding="utf-8")
    again = rookhaven(env, "log", "mirror", str(mirror))
    assert "(0 new;" in again.stderr
    # Erase one result with every key and list entry that names it.
    store, k, k0 = pipeline.store, pipeline.store.keys, pipeline.store.keys.shards[0]
    victim = [key for key, _ in store.audits.scan()][5]
    leaf = store.client.lindex(k0.log_leaves, store.log.index_of(victim))
    digest = store.corpora.resolve("port")
    store.client.delete(k.result(victim), k.audit(victim))
    forget_job(store, victim)
    store.client.zrem(k0.audits_by_time, victim)
    store.client.zrem(k0.audits_by_corpus(digest), victim)
    store.client.lrem(k0.log_leaves, 1, leaf)
    store.client.hdel(k0.log_index, victim)
    args = ("verify", "--all", "--json", "--checkpoint", str(pinned_file), "--verifier-key",
            key[1])
    plain = rookhaven(env, *args)
    mirrored = rookhaven(env, *args, "--mirror", str(mirror))
    assert plain.returncode == mirrored.returncode == 1
    named = {(v["outcome"], v["key"]) for v in orjson.loads(mirrored.stdout)["verdicts"]
             if v["outcome"] != "match"}
    assert ("erased", victim) in named
    assert {key for _, key in named} - {"log", "store"} == {victim}, named
    assert ("erased", victim) not in {(v["outcome"], v["key"])
                                      for v in orjson.loads(plain.stdout)["verdicts"]}
    # The mirror refuses to follow the truncated log, and keeps what it had.
    refused = rookhaven(env, "log", "mirror", str(mirror))
    assert refused.returncode != 0 and "truncated" in one_line_error(refused)


def test_checkpoint_files_must_be_signed_and_their_signatures_are_checked_with_a_key(
        pipeline: Pipeline, signer: dict[str, str], key: tuple[Path, str],
        tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    checkpoint(signer, key, old)
    add_results(pipeline, 3, "more")
    checkpoint(signer, key, new)
    target = sorted(pipeline.store.results.keys())[0]
    unchecked = orjson.loads(rookhaven(signer, "log", "consistency", str(old), str(new)).stdout)
    assert unchecked["verified"] and unchecked["signatures"].startswith("not checked")
    vkey = key[1]
    checked = rookhaven(signer, "log", "consistency", str(old), str(new), "--verifier-key", vkey)
    assert checked.returncode == 0, checked.stderr
    assert orjson.loads(checked.stdout)["signatures"] == f"verified with {NAME}'s key"
    proved = rookhaven(signer, "log", "prove", target, "--checkpoint", str(new),
                       "--verifier-key", vkey)
    assert proved.returncode == 0 and orjson.loads(proved.stdout)["verified"], proved.stderr
    # Its signature lines cut off: refused, with or without a key, not read as if signed.
    bare = tmp_path / "bare"
    bare.write_text(old.read_text().split("\n\n")[0] + "\n")
    for extra in ((), ("--verifier-key", vkey)):
        done = rookhaven(signer, "log", "consistency", str(bare), str(new), *extra)
        assert done.returncode == 2 and "signature" in one_line_error(done), done.stderr
    # Signed by another key than the one given: refused.
    other = rookhaven(signer, "log", "keygen", "other.example/log", "--out",
                      str(tmp_path / "other.key")).stdout.strip()
    done = rookhaven(signer, "log", "prove", target, "--checkpoint", str(new),
                     "--verifier-key", other)
    assert done.returncode == 2 and done.stdout == ""


def test_tree_sizes_are_ascii_digits(pipeline: Pipeline, env: dict[str, str]) -> None:
    done = rookhaven(env, "log", "consistency", "\uff15", "10")
    assert done.returncode == 2, done.stdout
