"""schedenv: Gymnasium environments for scheduling parallel jobs, with the papers' policies.

``import schedenv`` registers every env id below; build one with ``gymnasium.make(id, **kwargs)``.
"""

from gymnasium.envs.registration import register

__version__ = "0.1.0"

ENV_IDS: tuple[str, ...] = (
    "schedenv/Malleable-v0",
    "schedenv/Dispatch-v0",
    "schedenv/Moldable-v0",
    "schedenv/MultiserverJob-v0",
)
"""Every env id this package registers (each family's docstring documents its arguments)."""

register(
    id="schedenv/Malleable-v0",
    entry_point="schedenv.malleable.env:MalleableEnv",
    vector_entry_point="schedenv.malleable.vector:MalleableVectorEnv",
)
register(
    id="schedenv/Dispatch-v0",
    entry_point="schedenv.dispatch.env:DispatchEnv",
    vector_entry_point="schedenv.dispatch.vector:DispatchVectorEnv",
)
register(
    id="schedenv/Moldable-v0",
    entry_point="schedenv.moldable.env:MoldableEnv",
    vector_entry_point="schedenv.moldable.vector:MoldableVectorEnv",
)
register(
    id="schedenv/MultiserverJob-v0",
    entry_point="schedenv.multiserver.env:MultiserverJobEnv",
    vector_entry_point="schedenv.multiserver.vector:MultiserverJobVectorEnv",
)

__all__ = ["ENV_IDS", "__version__"]
