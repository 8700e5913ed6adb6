"""Old public names kept as aliases of the project's one name per idea (docs/glossary.md)."""

from __future__ import annotations

import warnings


def warn_deprecated(old: str, new: str) -> None:
    """Warn (``DeprecationWarning``, pointing at the caller's caller) that ``old`` is now ``new``."""
    warnings.warn(f"{old} is deprecated; use {new} (docs/glossary.md)", DeprecationWarning, stacklevel=3)
