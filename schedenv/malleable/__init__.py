"""Malleable parallel jobs (heSRPT paper): a pure simulator and its Gymnasium adapter."""

from schedenv.malleable.sim import MalleableParams, MalleableState, StepOutcome, advance, initial_state

__all__ = ["MalleableParams", "MalleableState", "StepOutcome", "advance", "initial_state"]
