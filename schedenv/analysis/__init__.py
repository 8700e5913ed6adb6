"""Closed-form results of the papers, used as baselines' inputs and as test oracles.

One module per paper; the public names are re-exported here.
"""

from schedenv.analysis.hesrpt import (
    hesrpt_allocation,
    hesrpt_mean_flow_time,
    hesrpt_mean_slowdown,
    hesrpt_weighted_flow_time,
)

__all__ = [
    "hesrpt_allocation",
    "hesrpt_mean_flow_time",
    "hesrpt_mean_slowdown",
    "hesrpt_weighted_flow_time",
]
