"""The model files: the ``wordllama`` wheel's (the default) and model2vec-format directories.

The wheel's own loader is never used: it looks for its tokenizer where the wheel does not
ship it and then tries a download. Its two files are read here by path, found without
importing the package, and checked against the digest pinned below.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from functools import cache
from pathlib import Path

from ..core.semantic.bpe import BpeTokenizer, spec_from_json
from ..core.semantic.model import StaticModel, quantize
from ..core.semantic.shelf import SHELF
from ..errors import ConfigError
from .safetensors import read_table

# wordllama 0.4.0.post1: weights/l2_supercat_256.safetensors (F16, 32000 x 256) and
# tokenizers/l2_supercat_tokenizer_config.json (Llama-2's tokenizer).
WORDLLAMA_TABLE_SHA256 = \
    "sha256:64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5"
WORDLLAMA_TOKENIZER_SHA256 = \
    "sha256:93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68"
WORDLLAMA_TABLE = "weights/l2_supercat_256.safetensors"
WORDLLAMA_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
# What a model2vec directory holds.
DIRECTORY_TABLE = "model.safetensors"
DIRECTORY_TOKENIZER = "tokenizer.json"
TABLE_NAMES = ("embeddings", "embedding.weight")


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def wordllama_files() -> tuple[Path, Path] | None:
    """The wheel's vector table and tokenizer, if the package is installed."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    table, tokenizer = root / WORDLLAMA_TABLE, root / WORDLLAMA_TOKENIZER
    return (table, tokenizer) if table.is_file() and tokenizer.is_file() else None


def _model(table: Path, tokenizer: Path, source: str) -> StaticModel:
    table_bytes, tokenizer_bytes = table.read_bytes(), tokenizer.read_bytes()
    try:
        spec = spec_from_json(json.loads(tokenizer_bytes))
    except ValueError as exc:
        raise ConfigError(f"{tokenizer}: not JSON ({exc})") from None
    return StaticModel(tokenizer=BpeTokenizer(spec),
                       table=quantize(read_table(table_bytes, str(table), TABLE_NAMES)),
                       table_digest=_digest(table_bytes),
                       tokenizer_digest=_digest(tokenizer_bytes), source=source)


def _wordllama() -> StaticModel:
    files = wordllama_files()
    if files is None:
        raise ConfigError("the wordllama package is gone (pip install 'rookhaven[hybrid]')")
    return _model(*files, source="wordllama 0.4.0.post1 (l2_supercat_256)")


def offer_default() -> None:
    """Offer the wheel's model, if installed, to the shelf (read on first use)."""
    if wordllama_files() is not None:
        SHELF.offer("wordllama-l2-supercat-256", WORDLLAMA_TABLE_SHA256, _wordllama)


def load_directory(path: Path) -> StaticModel:
    """The model of a model2vec-format directory (``model.safetensors`` + ``tokenizer.json``)."""
    table, tokenizer = path / DIRECTORY_TABLE, path / DIRECTORY_TOKENIZER
    for needed in (table, tokenizer):
        if not needed.is_file():
            raise ConfigError(f"ROOKHAVEN_EMBEDDING_MODEL: {path} has no {needed.name} (a "
                              "model2vec-format directory holds model.safetensors and "
                              "tokenizer.json)")
    return _model(table, tokenizer, source=str(path))


@cache
def offer_directory(path: Path, default: bool = True) -> str:
    """Offer the model of ``path`` (as the default model, with ``default``); its table
    digest (the directory's files are read now, to name the model)."""
    model = load_directory(path)
    SHELF.offer(f"directory:{path}", model.table_digest, lambda: model, default=default)
    return model.table_digest
