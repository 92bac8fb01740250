"""Signed notes and checkpoints: the Go vector reproduces, every forgery is refused by name."""

from __future__ import annotations

import base64
import json
import traceback

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.errors import (
    InputError,
    NoteError,
    NoteFormatError,
    NoteSignatureError,
    UnknownNoteKeyError,
)
from rookhaven.transparency import note
from rookhaven.transparency.note import Checkpoint
from tests.conftest import ROOT, SHARED

SHARED_VECTOR = SHARED / "vectors" / "signed-note.json"
CHECKED_IN = ROOT / "tests" / "vectors" / "signed-note.json"
VECTOR = json.loads((SHARED_VECTOR if SHARED_VECTOR.exists() else CHECKED_IN).read_text())
PRIVATE, VERIFIER = note.generate_key("example.com/log", bytes(range(32)))
OTHER_PRIVATE, OTHER_VERIFIER = note.generate_key("example.com/log", bytes(32))
TEXT = "example.com/log\n7\n" + base64.b64encode(bytes(32)).decode() + "\n"
ROOT_HASH = bytes(range(100, 132))


def _secret(private_key: str) -> str:
    return private_key.rsplit("+", 1)[1] if private_key.count("+") == 4 else private_key


def test_the_checked_in_vector_is_the_shared_one_when_both_exist() -> None:
    if SHARED_VECTOR.exists():
        assert json.loads(CHECKED_IN.read_text()) == json.loads(SHARED_VECTOR.read_text())


def test_signing_the_vector_text_gives_the_vector_note_byte_for_byte() -> None:
    assert note.sign_note(VECTOR["text"], VECTOR["private_key"]) == VECTOR["signed_note"]
    assert note.verifier_of(VECTOR["private_key"]) == VECTOR["verifier_key"]
    assert note.open_note(VECTOR["signed_note"], [VECTOR["verifier_key"]]) == VECTOR["text"]


def test_the_vector_keys_carry_a_plus_inside_their_base64() -> None:
    # Why keys are split at most 4 (private) or 2 (verifier) times: a naive split breaks here.
    assert "+" in VECTOR["private_key"].split("+", 4)[4]


def test_a_generated_key_signs_and_its_verifier_opens() -> None:
    assert note.verifier_of(PRIVATE) == VERIFIER
    assert PRIVATE.startswith("PRIVATE+KEY+example.com/log+")
    assert note.open_note(note.sign_note(TEXT, PRIVATE), [VERIFIER]) == TEXT


@given(text=st.text(st.characters(blacklist_categories=["Cc", "Cs"]), max_size=200)
       .map(lambda t: t + "\n"), seed=st.binary(min_size=32, max_size=32))
def test_any_text_round_trips_under_any_seed(text: str, seed: bytes) -> None:
    private, verifier = note.generate_key("k", seed)
    assert note.open_note(note.sign_note(text, private), [verifier]) == text


def test_a_note_cosigned_by_an_unknown_key_still_opens_with_the_known_one() -> None:
    signed = note.sign_note(TEXT, PRIVATE)
    cosigned = signed + note.sign_note(TEXT, OTHER_PRIVATE).split("\n\n")[-1]
    assert note.open_note(cosigned, [VERIFIER]) == TEXT
    assert note.open_note(cosigned, [VERIFIER, OTHER_VERIFIER]) == TEXT


# --- forgeries and tampering ------------------------------------------------------------

SIGNED = note.sign_note(TEXT, PRIVATE)
SIG_LINE = SIGNED.split("\n\n")[-1]
SIG_B64 = SIG_LINE.rsplit(" ", 1)[1].rstrip("\n")


def _replace_sig(new_b64: str) -> str:
    return SIGNED.replace(SIG_B64, new_b64)


def _flip_char(text: str, at: int) -> str:
    return text[:at] + ("B" if text[at] == "A" else "A") + text[at + 1 :]


def _with_key_id(key_id: bytes) -> str:
    raw = base64.b64decode(SIG_B64)
    return _replace_sig(base64.b64encode(key_id + raw[4:]).decode())


@pytest.mark.parametrize(("forged", "error", "says"), [
    (SIGNED.replace("\n7\n", "\n8\n"), NoteSignatureError, "does not verify"),
    (_replace_sig(_flip_char(SIG_B64, 20)), NoteSignatureError, "does not verify"),
    (TEXT.replace("7", "9") + "\n" + SIG_LINE, NoteSignatureError, "does not verify"),
    (note.sign_note(TEXT, OTHER_PRIVATE), UnknownNoteKeyError, "no signature by a known key"),
    (SIGNED.replace("\u2014 example.com/log ", "\u2014 example.com/lag "),
     UnknownNoteKeyError, "no signature by a known key"),
    (_with_key_id(b"\x00\x00\x00\x00"), UnknownNoteKeyError, r"example\.com/log\+00000000"),
    (SIGNED[:-1], NoteFormatError, "newline"),
    (_replace_sig(SIG_B64[:-4]), NoteFormatError, "truncated"),
    (_replace_sig(SIG_B64[:-1]), NoteFormatError, "base64"),
    (_replace_sig(SIG_B64[:-2] + "B="), NoteFormatError, "canonical"),
    (_replace_sig("AAAA"), NoteFormatError, "too short"),
    (SIGNED.replace("\u2014", "-"), NoteFormatError, "em dash"),
    (TEXT, NoteFormatError, "blank line"),
    (TEXT + "\n", NoteFormatError, "no signature lines"),
    (SIGNED.replace("\n7\n", "\n7\x07\n"), NoteFormatError, "control character"),
])
def test_every_tampering_is_refused_with_a_message_that_says_which(
        forged: str, error: type[NoteError], says: str) -> None:
    with pytest.raises(error, match=says):
        note.open_note(forged, [VERIFIER])


def test_a_signature_relabelled_with_another_name_of_the_same_key_is_refused() -> None:
    # The key ID hashes the name with the key, so one Ed25519 key under two names is two
    # keys: a signature line renamed to the other name carries the wrong key ID.
    _, renamed = note.generate_key("example.com/other", bytes(range(32)))
    relabelled = SIGNED.replace("\u2014 example.com/log ", "\u2014 example.com/other ")
    with pytest.raises(UnknownNoteKeyError, match=r"example\.com/other\+"):
        note.open_note(relabelled, [renamed])
    with pytest.raises(UnknownNoteKeyError):
        note.open_note(SIGNED, [renamed])


def test_a_verifier_key_whose_hash_does_not_match_its_key_is_refused() -> None:
    name, key_id, key = VERIFIER.split("+", 2)
    wrong = f"{name}+{int(key_id, 16) ^ 1:08x}+{key}"
    with pytest.raises(NoteFormatError, match="does not match"):
        note.open_note(SIGNED, [wrong])


@pytest.mark.parametrize("name", ["", "a+b", "a b", "a\tb", "a\u3000b"])
def test_key_names_with_a_plus_or_a_space_or_nothing_are_refused(name: str) -> None:
    with pytest.raises(NoteFormatError, match="key name"):
        note.generate_key(name, bytes(32))


def test_a_text_without_its_final_newline_is_not_signed() -> None:
    with pytest.raises(NoteFormatError, match="newline"):
        note.sign_note(TEXT[:-1], PRIVATE)


def test_errors_are_input_errors() -> None:
    assert issubclass(NoteError, InputError)


# --- the private key never leaks --------------------------------------------------------

def _rendered(error: BaseException) -> str:
    return "".join(traceback.format_exception(error)) + repr(error) + str(error)


@pytest.mark.parametrize("call", [
    lambda: note.sign_note("no newline", PRIVATE),
    lambda: note.sign_note(TEXT, PRIVATE.replace("+KEY+example.com/log+", "+KEY+a b+")),
    lambda: note.sign_note(TEXT, PRIVATE[:-3]),
    lambda: note.sign_note(TEXT, PRIVATE[:-6] + "A" + PRIVATE[-5:]),
    lambda: note.verifier_of(PRIVATE.replace("PRIVATE+KEY", "PRIVATE+KY")),
    lambda: note.open_note(SIGNED, [PRIVATE]),
    lambda: note.verify_checkpoint(SIGNED, PRIVATE),
])
def test_no_error_message_or_traceback_shows_the_private_key(call: object) -> None:
    with pytest.raises(NoteError) as caught:
        call()  # type: ignore[operator]
    shown = _rendered(caught.value)
    assert _secret(PRIVATE) not in shown and _secret(PRIVATE)[:12] not in shown


def test_a_parsed_signer_repr_hides_the_seed() -> None:
    signer = note._parse_signer(PRIVATE)
    assert "seed" not in repr(signer) and repr(bytes(range(32))) not in repr(signer)


# --- checkpoints ------------------------------------------------------------------------

def test_a_checkpoint_formats_and_parses_back_with_its_extensions() -> None:
    cp = Checkpoint("example.com/log", 12345, ROOT_HASH, ("ext one", "ext-two"))
    body = cp.body()
    assert body == ("example.com/log\n12345\n" + base64.b64encode(ROOT_HASH).decode()
                    + "\next one\next-two\n")
    assert Checkpoint.parse(body) == cp
    assert Checkpoint.parse(Checkpoint("o", 0, ROOT_HASH).body()).size == 0


def test_a_signed_checkpoint_verifies_and_a_wrong_key_does_not() -> None:
    cp = Checkpoint("example.com/log", 2**64 - 1, ROOT_HASH)
    signed = note.sign_checkpoint(cp, PRIVATE)
    assert note.verify_checkpoint(signed, VERIFIER) == cp
    with pytest.raises(UnknownNoteKeyError):
        note.verify_checkpoint(note.sign_checkpoint(cp, OTHER_PRIVATE), VERIFIER)
    other = note.sign_checkpoint(Checkpoint("example.com/log", 1, ROOT_HASH), PRIVATE)
    spliced = cp.body() + "\n" + other.split("\n\n")[-1]
    with pytest.raises(NoteSignatureError):
        note.verify_checkpoint(spliced, VERIFIER)


ROOT_B64 = base64.b64encode(ROOT_HASH).decode()


@pytest.mark.parametrize(("body", "says"), [
    (f"o\n12a\n{ROOT_B64}\n", "decimal"),
    (f"o\n012\n{ROOT_B64}\n", "leading zeros"),
    (f"o\n-1\n{ROOT_B64}\n", "decimal"),
    (f"o\n+1\n{ROOT_B64}\n", "decimal"),
    (f"o\n 1\n{ROOT_B64}\n", "decimal"),
    (f"o\n\u0661\n{ROOT_B64}\n", "decimal"),  # an Arabic-Indic one: int() takes it
    (f"o\n{2**64}\n{ROOT_B64}\n", "64-bit"),
    (f"o\n1\n{ROOT_B64[:-2]}\n", "base64"),
    (f"o\n1\n{ROOT_B64.replace('=', '')}\n", "base64"),
    (f"o\n1\n{base64.b64encode(bytes(31)).decode()}\n", "31 bytes"),
    (f"o\n1\n{base64.b64encode(bytes(33)).decode()}\n", "33 bytes"),
    ("o\n1\n", "origin, tree size and root"),
    (f"\n1\n{ROOT_B64}\n", "non-empty"),
    (f"o\n1\n{ROOT_B64}\n\next\n", "non-empty"),
    (f"o\n1\n{ROOT_B64}", "newline"),
])
def test_malformed_checkpoint_bodies_are_refused(body: str, says: str) -> None:
    with pytest.raises(NoteFormatError, match=says):
        Checkpoint.parse(body)
