"""The static embedding models this process can use, found by the digest an engine records.

Like the compiled kernels (``core.compiled``), which models are installed is state of the
process, not of a request: the edges (``rookhaven.embedding``) say where models are, and a
model is read the first time an engine asks for it. The core itself never reads a file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import ModelUnavailableError
from .model import StaticModel

INSTALL_HINT = "pip install 'rookhaven[hybrid]'"


@dataclass
class Shelf:
    """Loaders of installed models, by name, and the models read so far, by table digest."""

    # name -> (table digest, loader); the digest is known without reading the table.
    loaders: dict[str, tuple[str, Callable[[], StaticModel]]] = field(default_factory=dict)
    default: str | None = None  # the name of the model a bare engine means
    _loaded: dict[str, StaticModel] = field(default_factory=dict)

    def offer(self, name: str, digest: str, loader: Callable[[], StaticModel],
              default: bool = False) -> None:
        """Make the model ``name`` (vector table ``digest``) available, read on first use."""
        self.loaders[name] = (digest, loader)
        if default or self.default is None:
            self.default = name

    def default_digest(self) -> str:
        """The table digest of the default model, or why there is none."""
        if self.default is None:
            raise ModelUnavailableError(
                f"no static embedding model is installed ({INSTALL_HINT}, or point "
                "ROOKHAVEN_EMBEDDING_MODEL at a model2vec-format directory)")
        return self.loaders[self.default][0]

    def model(self, digest: str) -> StaticModel:
        """The model whose vector table has ``digest``, read once per process."""
        found = self._loaded.get(digest)
        if found is not None:
            return found
        for known, loader in self.loaders.values():
            if known == digest:
                model = loader()
                if model.table_digest != digest:
                    raise ModelUnavailableError(
                        f"model {digest} changed on disk ({model.source} now has "
                        f"{model.table_digest}); reinstall it ({INSTALL_HINT})")
                self._loaded[digest] = model
                return model
        raise ModelUnavailableError(f"model {digest} is not installed ({INSTALL_HINT})")

    def available(self) -> dict[str, str]:
        """Each offered model's name and table digest."""
        return {name: digest for name, (digest, _) in self.loaders.items()}


SHELF = Shelf()
