"""Public home of the seeded generators (implemented in the pure core)."""

from .core.rng import Mulberry32, cyrb128, cyrb128_reference, mulberry32

__all__ = ["Mulberry32", "cyrb128", "cyrb128_reference", "mulberry32"]
