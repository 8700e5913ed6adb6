"""Feature extractors over the job window: the slots form a set, so one network serves every slot.

An env's observation is ``[prefix | n_slots x slot_features | suffix]`` (docs/envs/index.md: a window of
``max_jobs`` slots plus summary features). ``SlotSetExtractor`` applies one shared MLP to every
slot (a DeepSets encoder, Zaheer et al. 2017), pools the slot embeddings (mean and max), embeds the
remaining (global) features, and then refines each slot with a second shared MLP that also sees
the pooled context. Its output keeps one block per slot, so a policy head can still give each slot
its own action weight (slot-equivariant) while the context is order-free (slot-invariant).

Pooling runs over all slots, padding included: the validity feature is an input of the shared MLP,
so the network learns what padding means, and the extractor needs no un-normalised mask (with
``VecNormalize`` the validity feature is no longer 0/1).

The layout is read from the env (``slot_layout``): attributes ``slot_features`` and ``n_slots``
(or ``max_jobs``) and, optionally, ``slots_start`` (default 0); or, for envs that do not expose
attributes, module constants ``SLOT_FEATURES`` and ``GLOBAL_FEATURES`` beside the env class with the
slots first. Envs with neither fall back to the flat MLP (``train`` warns).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn


@dataclass(frozen=True)
class SlotLayout:
    """Where the window's slots sit in a flat observation."""

    start: int
    """Index of the first slot feature."""
    n_slots: int
    """Number of slots (the window size)."""
    slot_features: int
    """Features per slot."""

    @property
    def stop(self) -> int:
        """One past the last slot feature."""
        return self.start + self.n_slots * self.slot_features


def slot_layout(env: gym.Env) -> SlotLayout | None:
    """The slot layout of ``env``'s observation, or None if the env does not describe one."""
    inner = env.unwrapped
    shape = env.observation_space.shape
    if shape is None or len(shape) != 1:
        return None
    length = int(shape[0])
    features = getattr(inner, "slot_features", None)
    n_slots = getattr(inner, "n_slots", getattr(inner, "max_jobs", None))
    if features is not None and n_slots is not None:
        layout = SlotLayout(int(getattr(inner, "slots_start", 0)), int(n_slots), int(features))
        return layout if layout.n_slots > 0 and layout.stop <= length else None
    module = sys.modules.get(type(inner).__module__)
    features = getattr(module, "SLOT_FEATURES", None)
    n_global = getattr(module, "GLOBAL_FEATURES", None)
    if features is None or n_global is None or n_slots is None:
        return None
    layout = SlotLayout(0, int(n_slots), int(features))
    return layout if layout.n_slots > 0 and layout.stop + int(n_global) == length else None


def _mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out), nn.ReLU())


class SlotSetExtractor(BaseFeaturesExtractor):
    """Shared per-slot encoder + mean/max pooling + per-slot refinement (see the module docstring).

    Output: ``n_slots * embed_dim`` refined slot features, then the pooled mean and max
    (``2 * embed_dim``) and the global embedding (``embed_dim``).
    """

    def __init__(
        self,
        observation_space: gym.spaces.Box,
        start: int,
        n_slots: int,
        slot_features: int,
        embed_dim: int = 32,
        hidden: int = 64,
    ) -> None:
        layout = SlotLayout(start, n_slots, slot_features)
        length = int(observation_space.shape[0])
        if layout.stop > length:
            raise ValueError(f"slot layout {layout} does not fit an observation of length {length}")
        n_global = length - n_slots * slot_features
        super().__init__(observation_space, features_dim=(n_slots + 3) * embed_dim)
        self.layout = layout
        self.encode = _mlp(slot_features, hidden, embed_dim)
        self.refine = _mlp(embed_dim * 4, hidden, embed_dim)
        self.encode_global = _mlp(max(n_global, 1), hidden, embed_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        layout = self.layout
        batch = observations.shape[0]
        slots = observations[:, layout.start : layout.stop].reshape(batch, layout.n_slots, layout.slot_features)
        rest = torch.cat([observations[:, : layout.start], observations[:, layout.stop :]], dim=1)
        if rest.shape[1] == 0:
            rest = torch.zeros(batch, 1, dtype=observations.dtype, device=observations.device)
        embedded = self.encode(slots)
        pooled = torch.cat([embedded.mean(dim=1), embedded.amax(dim=1)], dim=1)
        context = torch.cat([pooled, self.encode_global(rest)], dim=1)
        # refine's first layer on [slot | context] is W_slot @ slot + (W_context @ context + b): the context
        # half is the same for every slot, so it is computed once per sample rather than once per slot
        # (the same function and parameters, a third of the multiply-adds of the concatenated form).
        first = self.refine[0]
        assert isinstance(first, nn.Linear)
        width = embedded.shape[2]
        per_slot = embedded @ first.weight[:, :width].T
        shared = context @ first.weight[:, width:].T + first.bias
        refined = self.refine[1:](per_slot + shared.unsqueeze(1))
        return torch.cat([refined.flatten(start_dim=1), context], dim=1)
