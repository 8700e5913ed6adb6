"""Moldable jobs (HRF paper, Wu et al. CF'15): env ``schedenv/Moldable-v0``, event core, workloads."""

from schedenv.moldable.env import MoldableEnv, decode_action, encode_action
from schedenv.moldable.sim import MoldableJobRecord, MoldableSim, MoldableView
from schedenv.moldable.workload import LOADS, CirneWorkload, MoldableJobSet, parse_jobs

__all__ = [
    "LOADS",
    "CirneWorkload",
    "MoldableEnv",
    "MoldableJobRecord",
    "MoldableJobSet",
    "MoldableSim",
    "MoldableView",
    "decode_action",
    "encode_action",
    "parse_jobs",
]
