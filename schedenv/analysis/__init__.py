"""Closed-form results of the papers, used as baselines' inputs and as test oracles.

One module per paper; the public names are re-exported here.
"""

from schedenv.analysis.hesrpt import (
    hesrpt_allocation,
    hesrpt_mean_flow_time,
    hesrpt_mean_slowdown,
    hesrpt_weighted_flow_time,
)
from schedenv.analysis.moldable import downey_runtime, downey_speedup, list_schedule
from schedenv.analysis.multiserver import fb_mg1_response_time, sfs_gap_bound, srpt_mg1_response_time
from schedenv.analysis.queueing import (
    erlang_c,
    lwr_analysis,
    mg1_slowdown,
    mg1_waiting_time,
    random_analysis,
    sita_e_cutoffs,
)
from schedenv.analysis.queueing_mmk import (
    erlang_c_mean_response_time,
    erlang_c_mean_waiting_time,
    erlang_c_wait_probability,
)
from schedenv.analysis.tags import paper_size_dist, server_expansion, tags_analysis, tags_optimal_cutoffs

__all__ = [
    "downey_runtime",
    "downey_speedup",
    "erlang_c",
    "erlang_c_mean_response_time",
    "erlang_c_mean_waiting_time",
    "erlang_c_wait_probability",
    "fb_mg1_response_time",
    "hesrpt_allocation",
    "hesrpt_mean_flow_time",
    "hesrpt_mean_slowdown",
    "hesrpt_weighted_flow_time",
    "list_schedule",
    "lwr_analysis",
    "mg1_slowdown",
    "mg1_waiting_time",
    "paper_size_dist",
    "random_analysis",
    "server_expansion",
    "sfs_gap_bound",
    "sita_e_cutoffs",
    "srpt_mg1_response_time",
    "tags_analysis",
    "tags_optimal_cutoffs",
]
