"""schedenv: Gymnasium environments for scheduling parallel jobs, with the papers' policies.

``import schedenv`` registers every env id below; build one with ``gymnasium.make(id, **kwargs)``.
"""

from gymnasium.envs.registration import register

__version__ = "0.1.0"

ENV_IDS: tuple[str, ...] = ("schedenv/Malleable-v0",)
"""Every env id this package registers (each family's docstring documents its arguments)."""

register(id="schedenv/Malleable-v0", entry_point="schedenv.malleable.env:MalleableEnv")

__all__ = ["ENV_IDS", "__version__"]
