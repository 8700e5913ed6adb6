"""schedenv: Gymnasium environments for scheduling parallel jobs, with the papers' policies.

``import schedenv`` registers every env id below; build one with ``gymnasium.make(id, **kwargs)``.
The families behind the ids are described in ``schedenv.family`` (docs/families.md).
"""

from schedenv.family import BUILTIN, families, register

__version__ = "0.1.0"

for _family in BUILTIN:
    register(_family)

ENV_IDS: tuple[str, ...] = tuple(f.env_id for f in families())
"""Every env id this package registers (each family's docstring documents its arguments)."""

__all__ = ["ENV_IDS", "__version__"]
