"""The package version: a leaf, so any layer can read it without importing the package face."""

from __future__ import annotations

__version__ = "0.1.0"
