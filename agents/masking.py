"""A masked categorical policy head without ``torch.distributions`` objects, for MaskablePPO on batched envs.

sb3-contrib's ``MaskableCategoricalDistribution`` builds one ``torch.distributions.Categorical`` per
action component and builds it again when the mask is applied (each build normalises the logits and,
with argument validation on, checks them). On the batched envs, where one forward pass covers
thousands of samples, that bookkeeping costs about a quarter of a MaskablePPO update
(``benchmarks/speed.py``). ``FusedMaskedDistribution`` computes the same quantities with one masked
``log_softmax`` per component:

- a masked choice gets the logit -1e8 (sb3-contrib's value), so its probability is 0 in float32;
- ``log_prob`` and ``entropy`` sum over the components of a ``MultiDiscrete`` action, and masked
  choices contribute nothing to the entropy;
- ``sample`` draws by the Gumbel-max trick on the log-probabilities (no ``exp`` of masked entries), its
  exponential noise from uniforms (``-log U``);
  ``mode`` is the argmax.

``FusedMaskablePolicy`` is ``MaskableActorCriticPolicy`` with this head. Its parameters have the same
names and shapes, so a model saved by either policy class loads into the other
(``tests/agents/test_masking.py`` checks that both give the same log-probabilities and entropies).
With an anchor (``FusedMaskablePolicy.set_anchor``, the ``warm_start_kl`` setting), the entropy it gives
the algorithm is the relative entropy to the anchor, ``-KL(π ‖ anchor)``: PPO's entropy bonus
``ent_coef · H(π)`` becomes the penalty ``ent_coef · KL(π ‖ anchor)`` (docs/rl/index.md, "Warm start").
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableDistribution, MaybeMasks
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

MASKED_LOGIT = -1e8
"""The logit of a masked choice (sb3-contrib's ``HUGE_NEG``)."""
SMALLEST_UNIFORM = 2.0**-24
"""The least positive float32 uniform ``torch.rand`` draws (its values are multiples of 2^-24)."""


class FusedMaskedDistribution(MaskableDistribution):
    """Masked categorical over ``Discrete(n)`` (``action_dims=[n]``) or ``MultiDiscrete(action_dims)``."""

    def __init__(self, action_dims: Sequence[int], multi: bool) -> None:
        super().__init__()
        self.action_dims = [int(d) for d in action_dims]
        self.multi = multi
        """True for ``MultiDiscrete`` (actions of shape (batch, components)), False for ``Discrete``."""
        self._logits: th.Tensor | None = None
        self._masks: th.Tensor | None = None
        self._log_probs: list[th.Tensor] | None = None

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        """One linear layer to the concatenated logits of every component (sb3-contrib's layout)."""
        return nn.Linear(latent_dim, sum(self.action_dims))

    def proba_distribution(self, action_logits: th.Tensor) -> FusedMaskedDistribution:
        """Set the unmasked logits (any mask applied before is removed)."""
        self._logits = action_logits.view(-1, sum(self.action_dims))
        self._masks = None
        self._log_probs = None
        return self

    def apply_masking(self, masks: MaybeMasks) -> None:
        """Give masked choices (False in ``masks``) probability 0; None removes the mask."""
        logits = self._require_logits()
        if masks is None:
            self._masks = None
        else:
            self._masks = th.as_tensor(masks, dtype=th.bool, device=logits.device).view_as(logits)
        self._log_probs = None

    def log_prob(self, actions: th.Tensor) -> th.Tensor:
        """Log-probability of each action (summed over components), shape (batch,)."""
        columns = actions.long().view(-1, len(self.action_dims))
        parts = [lp.gather(1, columns[:, i : i + 1]).squeeze(1) for i, lp in enumerate(self._components())]
        return th.stack(parts, dim=1).sum(dim=1)

    def entropy(self) -> th.Tensor:
        """Entropy summed over components, masked choices excluded, shape (batch,)."""
        logits = self._require_logits()
        total = th.zeros(logits.shape[0], device=logits.device)
        for lp, mask in zip(self._components(), self._split_masks(), strict=True):
            # exp() of the masked log-probabilities (about -1e8) underflows on a slow path of the CPU's exp;
            # clamping at -87 keeps it on the fast one (exp(-87) ~ 1.6e-38) and the terms of masked choices
            # are zeroed anyway. A valid choice below e^-87 would contribute under 1e-35.
            p_log_p = lp.clamp(min=-87.0).exp() * (lp if mask is None else lp.masked_fill(~mask, 0.0))
            total = total - p_log_p.sum(dim=1)
        return total

    def kl_divergence(self, other: FusedMaskedDistribution) -> th.Tensor:
        """KL(self ‖ other) summed over components, shape (batch,); ``other`` holds the same masks (its masked
        choices, probability 0 in both, contribute nothing)."""
        logits = self._require_logits()
        total = th.zeros(logits.shape[0], device=logits.device)
        for lp, other_lp, mask in zip(self._components(), other._components(), self._split_masks(), strict=True):
            difference = lp - other_lp
            if mask is not None:
                difference = difference.masked_fill(~mask, 0.0)
            total = total + (lp.clamp(min=-87.0).exp() * difference).sum(dim=1)  # the clamp: see entropy
        return total

    def sample(self) -> th.Tensor:
        """One action per row, drawn from the masked probabilities by the Gumbel-max trick: the argmax of
        log p - log E, E = -log U ~ Exp(1), U uniform on [0, 1). ``exponential_`` would draw E directly, but
        on the CPU it costs several times the uniform and two vectorised logarithms (docs/rl/index.md,
        "Training speed"). U = 0 (probability 2^-24 per choice) is drawn as 2^-24, the next value of the
        uniform's grid: E then stays finite, so an allowed choice never scores -inf and a masked one
        (log p about -1e8) never wins."""
        picks = [
            (lp - th.rand_like(lp).clamp_(min=SMALLEST_UNIFORM).log_().neg_().log_()).argmax(dim=1)
            for lp in self._components()
        ]
        return self._shape(picks)

    def mode(self) -> th.Tensor:
        """The most likely valid choice of each component."""
        return self._shape([lp.argmax(dim=1) for lp in self._components()])

    def actions_from_params(self, action_logits: th.Tensor, deterministic: bool = False) -> th.Tensor:
        """Actions for ``action_logits`` (no mask)."""
        self.proba_distribution(action_logits)
        return self.get_actions(deterministic=deterministic)

    def log_prob_from_params(self, action_logits: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        """Sampled actions for ``action_logits`` and their log-probabilities."""
        actions = self.actions_from_params(action_logits)
        return actions, self.log_prob(actions)

    def log_probs(self) -> list[th.Tensor]:
        """Each component's log-probabilities of all its choices, (batch, n_i); masked ones at about -1e8."""
        return self._components()

    def _require_logits(self) -> th.Tensor:
        if self._logits is None:
            raise RuntimeError("proba_distribution() must be called before using the distribution")
        return self._logits

    def _split_masks(self) -> list[th.Tensor | None]:
        if self._masks is None:
            return [None] * len(self.action_dims)
        return list(th.split(self._masks, self.action_dims, dim=1))

    def _components(self) -> list[th.Tensor]:
        if self._log_probs is None:
            logits = self._require_logits()
            if self._masks is not None:
                logits = logits.masked_fill(~self._masks, MASKED_LOGIT)
            self._log_probs = [part.log_softmax(dim=1) for part in th.split(logits, self.action_dims, dim=1)]
        return self._log_probs

    def _shape(self, picks: list[th.Tensor]) -> th.Tensor:
        return th.stack(picks, dim=1) if self.multi else picks[0]


def fused_distribution(action_space: spaces.Space) -> FusedMaskedDistribution:
    """The fused masked head for a ``Discrete`` or ``MultiDiscrete`` action space."""
    if isinstance(action_space, spaces.Discrete):
        return FusedMaskedDistribution([int(action_space.n)], multi=False)
    if isinstance(action_space, spaces.MultiDiscrete) and action_space.nvec.ndim == 1:
        return FusedMaskedDistribution([int(n) for n in action_space.nvec], multi=True)
    raise ValueError(f"action_space={action_space} is not allowed; FusedMaskablePolicy needs Discrete or MultiDiscrete")


class FusedMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` whose action head is ``FusedMaskedDistribution`` (same parameters), with
    an optional anchor for the relative-entropy term (module doc)."""

    anchor: FusedMaskablePolicy | None = None
    """A frozen copy of the policy (not a submodule: neither saved with the model nor optimised), or None."""

    def _build(self, lr_schedule: Any) -> None:
        self.action_dist = fused_distribution(self.action_space)
        super()._build(lr_schedule)

    def set_anchor(self, state: dict[str, th.Tensor] | None = None) -> None:
        """Freeze a copy of this policy (with the parameters ``state``, else its own) as the anchor."""
        object.__setattr__(self, "anchor", None)
        anchor = copy.deepcopy(self)
        if state is not None:
            anchor.load_state_dict(state)
        anchor.requires_grad_(False)
        anchor.set_training_mode(False)
        object.__setattr__(self, "anchor", anchor)  # plain attribute: nn.Module would register it

    def evaluate_actions(
        self, obs: th.Tensor, actions: th.Tensor, action_masks: th.Tensor | None = None
    ) -> tuple[th.Tensor, th.Tensor, th.Tensor | None]:
        """Values, log-probabilities and entropies, as MaskablePPO's policy gives them; with an anchor the
        entropies are ``-KL(π ‖ anchor)`` of each sample (masks applied to both)."""
        values, log_prob, entropy = super().evaluate_actions(obs, actions, action_masks)
        if self.anchor is None:
            return values, log_prob, entropy
        with th.no_grad():
            reference = self.anchor.get_distribution(obs)
            reference.apply_masking(action_masks)
        assert isinstance(self.action_dist, FusedMaskedDistribution) and isinstance(reference, FusedMaskedDistribution)
        return values, log_prob, -self.action_dist.kl_divergence(reference)
