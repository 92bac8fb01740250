"""C2SP signed notes and tlog checkpoints, signed and verified with Ed25519.

Formats: c2sp.org/signed-note and c2sp.org/tlog-checkpoint. A note is its text (ending in
a newline), a blank line, then one line per signature: an em dash, a space, the key
name, a space and base64(4-byte key ID || signature). Keys are strings:
``NAME+HASH+BASE64(0x01 || public key)`` and ``PRIVATE+KEY+NAME+HASH+BASE64(0x01 || seed)``.
The seed always comes from the caller: the core has no randomness.

No private key, nor any part of one, ever goes into an exception message or a repr.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..errors import NoteFormatError, NoteSignatureError, UnknownNoteKeyError

ED25519 = b"\x01"
SIG_PREFIX = "\u2014 "  # em dash, space
_KEY_ID = re.compile(r"[0-9a-fA-F]{8}")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
MAX_SIZE = 2**64 - 1


@dataclass(frozen=True)
class _Verifier:
    name: str
    key_id: bytes
    public: bytes


@dataclass(frozen=True)
class _Signer:
    name: str
    key_id: bytes
    seed: bytes = field(repr=False)  # a repr must never show the private key


def _check_name(name: str) -> None:
    """C2SP key names: non-empty, no Unicode space and no '+' (it separates key fields)."""
    if not name or "+" in name or any(c.isspace() for c in name):
        raise NoteFormatError(
            f"key name {name!r} is invalid: it must be non-empty, without spaces or '+'")


def _key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + ED25519 + public).digest()[:4]


def _b64decode(text: str, what: str) -> bytes:
    """Strict standard base64: padded, no stray characters, and canonical.

    Canonical means it re-encodes to the same text: otherwise the unused low bits of the
    last character would let two spellings of one signature both pass.
    """
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NoteFormatError(f"{what} is not valid base64") from None
    if base64.b64encode(raw).decode() != text:
        raise NoteFormatError(f"{what} is not canonical base64")
    return raw


def _public_of(seed: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()


def _verifier_string(name: str, public: bytes) -> str:
    encoded = base64.b64encode(ED25519 + public).decode()
    return f"{name}+{_key_id(name, public).hex()}+{encoded}"


def generate_key(name: str, seed: bytes) -> tuple[str, str]:
    """(private key string, verifier key string) for ``name`` from a 32-byte Ed25519 seed."""
    _check_name(name)
    if len(seed) != 32:
        raise NoteFormatError(f"an Ed25519 seed is 32 bytes, got {len(seed)}")
    public = _public_of(seed)
    private = f"PRIVATE+KEY+{name}+{_key_id(name, public).hex()}+"
    return private + base64.b64encode(ED25519 + seed).decode(), _verifier_string(name, public)


def _parse_signer(private_key: str) -> _Signer:
    # maxsplit 4: the base64 field may itself contain '+'.
    parts = private_key.split("+", 4)
    if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
        raise NoteFormatError("private key is malformed: expected PRIVATE+KEY+NAME+HASH+KEY")
    name, key_id, encoded = parts[2], parts[3], parts[4]
    if not name or "+" in name or any(c.isspace() for c in name):
        # Not _check_name: its message quotes the name, and this is part of a private key.
        raise NoteFormatError("private key is malformed: its name is invalid")
    raw = _b64decode(encoded, "private key")
    if len(raw) != 33 or raw[:1] != ED25519:
        raise NoteFormatError("private key is not an Ed25519 (0x01 || 32-byte seed) key")
    signer = _Signer(name, _key_id(name, _public_of(raw[1:])), raw[1:])
    if key_id != signer.key_id.hex():
        raise NoteFormatError("private key's key ID does not match its name and key")
    return signer


def _parse_verifier(verifier_key: str) -> _Verifier:
    if verifier_key.startswith("PRIVATE+"):
        # A private key passed by mistake: say so without echoing any of it.
        raise NoteFormatError("a private key was given where a verifier key belongs")
    # maxsplit 2: the base64 field may itself contain '+'.
    parts = verifier_key.split("+", 2)
    if len(parts) != 3:
        raise NoteFormatError("verifier key is malformed: expected NAME+HASH+KEY")
    name, key_id, encoded = parts
    _check_name(name)
    if not _KEY_ID.fullmatch(key_id):
        raise NoteFormatError(f"verifier key {name!r}: key ID {key_id!r} is not 8 hex digits")
    raw = _b64decode(encoded, f"verifier key {name!r}")
    if len(raw) != 33 or raw[:1] != ED25519:
        raise NoteFormatError(f"verifier key {name!r} is not an Ed25519 (0x01 || 32 bytes) key")
    verifier = _Verifier(name, bytes.fromhex(key_id), raw[1:])
    if _key_id(name, verifier.public) != verifier.key_id:
        raise NoteFormatError(f"verifier key {name!r}: key ID {key_id} does not match its key")
    return verifier


def check_verifier_key(verifier_key: str) -> None:
    """NoteFormatError, saying what is wrong, unless ``verifier_key`` is a well-formed
    verifier key (NAME+HASH+KEY)."""
    _parse_verifier(verifier_key)


def verifier_of(private_key: str) -> str:
    """The verifier key string that checks signatures made with ``private_key``."""
    signer = _parse_signer(private_key)
    return _verifier_string(signer.name, _public_of(signer.seed))


def _check_text(text: str) -> None:
    """Note text: ends in a newline; no control characters but newline (C2SP, Go's note)."""
    if not text.endswith("\n"):
        raise NoteFormatError("note text must end with a newline")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise NoteFormatError("note text is not valid UTF-8 (it holds a lone surrogate)") from None
    bad = next((c for c in text if c != "\n" and unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise NoteFormatError(f"note text contains the control character {bad!r}")


def sign_note(text: str, private_key: str) -> str:
    """``text`` signed with ``private_key``: the text, a blank line and one signature line."""
    _check_text(text)
    signer = _parse_signer(private_key)
    signature = Ed25519PrivateKey.from_private_bytes(signer.seed).sign(text.encode())
    encoded = base64.b64encode(signer.key_id + signature).decode()
    return f"{text}\n{SIG_PREFIX}{signer.name} {encoded}\n"


@dataclass(frozen=True)
class _Signature:
    name: str
    key_id: bytes
    signature: bytes


def _split_note(note: str) -> tuple[str, list[_Signature]]:
    """The text and the signature lines; the last blank line separates them."""
    _check_text(note)
    split = note.rfind("\n\n")
    if split < 0:
        raise NoteFormatError("note has no blank line before its signatures")
    text, block = note[: split + 1], note[split + 2 :]
    if not block:
        raise NoteFormatError("note has no signature lines")
    return text, [_parse_signature(line) for line in block[:-1].split("\n")]


def signed_text(note: str) -> str:
    """The text of ``note``, refused (NoteFormatError) unless it is a signed note in form: a
    text, a blank line and signature lines. Checks no signature: ``open_note`` does."""
    return _split_note(note)[0]


def _parse_signature(line: str) -> _Signature:
    if not line.startswith(SIG_PREFIX):
        raise NoteFormatError(f"signature line {line!r} does not start with an em dash and space")
    name, _, encoded = line[len(SIG_PREFIX) :].partition(" ")
    _check_name(name)
    raw = _b64decode(encoded, f"signature of {name!r}")
    if len(raw) < 5:
        raise NoteFormatError(f"signature of {name!r} is too short to hold a key ID")
    return _Signature(name, raw[:4], raw[4:])


def open_note(note: str, verifier_keys: Sequence[str]) -> str:
    """The text of ``note`` once every signature by a known key verifies, and one does.

    Signatures by keys not in ``verifier_keys`` are ignored (a note may carry cosignatures);
    a known key matches on both name and key ID, as C2SP requires.
    """
    verifiers = {(v.name, v.key_id): v for v in map(_parse_verifier, verifier_keys)}
    text, signatures = _split_note(note)
    verified = 0
    for sig in signatures:
        verifier = verifiers.get((sig.name, sig.key_id))
        if verifier is None:
            continue
        if len(sig.signature) != 64:
            raise NoteFormatError(f"the signature by {sig.name}+{sig.key_id.hex()} is truncated "
                                  f"or padded: {len(sig.signature)} bytes, Ed25519 needs 64")
        try:
            Ed25519PublicKey.from_public_bytes(verifier.public).verify(
                sig.signature, text.encode())
        except InvalidSignature:
            raise NoteSignatureError(
                f"the signature by {sig.name}+{sig.key_id.hex()} does not verify") from None
        verified += 1
    if not verified:
        seen = ", ".join(f"{s.name}+{s.key_id.hex()}" for s in signatures)
        raise UnknownNoteKeyError(f"no signature by a known key; the note is signed by {seen}")
    return text


@dataclass(frozen=True)
class Checkpoint:
    """A tlog checkpoint: the log's origin, its tree size and root hash, extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        lines = [self.origin, *self.extensions]
        if not self.origin or any(not line or "\n" in line for line in lines):
            raise NoteFormatError("checkpoint origin and extension lines must be non-empty "
                                  "single lines")
        if not 0 <= self.size <= MAX_SIZE:
            raise NoteFormatError(f"checkpoint tree size {self.size} is not a 64-bit size")
        if len(self.root) != 32:
            raise NoteFormatError(f"checkpoint root is {len(self.root)} bytes, need 32")

    def body(self) -> str:
        """The checkpoint's note text: origin, size, base64 root, extensions, each a line."""
        root = base64.b64encode(self.root).decode()
        return "".join(f"{line}\n" for line in (self.origin, str(self.size), root,
                                                  *self.extensions))

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        """The checkpoint ``text`` (a note's verified text) holds; NoteFormatError if none."""
        _check_text(text)
        lines = text[:-1].split("\n")
        if len(lines) < 3:
            raise NoteFormatError("checkpoint needs origin, tree size and root lines")
        origin, size, root, *extensions = lines
        if not _DECIMAL.fullmatch(size):
            raise NoteFormatError(f"checkpoint tree size {size!r} is not a decimal number "
                                  "without leading zeros")
        return cls(origin, int(size), _b64decode(root, "checkpoint root"), tuple(extensions))


def sign_checkpoint(checkpoint: Checkpoint, private_key: str) -> str:
    """The checkpoint as a signed note."""
    return sign_note(checkpoint.body(), private_key)


def verify_checkpoint(note: str, verifier_key: str) -> Checkpoint:
    """The checkpoint in ``note`` once ``verifier_key``'s signature on it verifies."""
    return Checkpoint.parse(open_note(note, [verifier_key]))
