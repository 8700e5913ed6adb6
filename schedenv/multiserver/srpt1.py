"""The resource-pooled SRPT-1 system (Grosof et al. 2022, §4.1): one server with the capacity of
all k servers, serving the job of least remaining size s = k_j d_j / k, preemptively. On the same
arrivals and sizes it is a lower bound on the optimal mean response time of the multiserver-job
system; ``schedenv.analysis.srpt_mg1_response_time`` gives its steady-state mean.
"""

from __future__ import annotations

import heapq

import numpy as np


def srpt1_completion_times(arrival_times: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Completion times of preemptive SRPT on one unit-rate server (ties: earlier arrival first).

    An event loop over a heap of (remaining size, job): between two arrivals the head job runs
    until it completes or the next arrival preempts it.
    """
    arrivals = np.asarray(arrival_times, dtype=np.float64)
    work = np.asarray(sizes, dtype=np.float64)
    if arrivals.shape != work.shape or arrivals.ndim != 1:
        raise ValueError(f"arrival_times and sizes need equal 1-D shapes; got {arrivals.shape} and {work.shape}")
    if (np.diff(arrivals) < 0).any():
        raise ValueError("arrival_times must be nondecreasing")
    completion = np.empty(arrivals.size)
    heap: list[tuple[float, int]] = []
    time = 0.0
    for job, (arrival, size) in enumerate(zip(arrivals.tolist(), work.tolist(), strict=True)):
        while heap and time < arrival:
            remaining, head = heap[0]
            if time + remaining <= arrival:
                heapq.heappop(heap)
                time += remaining
                completion[head] = time
            else:
                heapq.heapreplace(heap, (remaining - (arrival - time), head))
                time = arrival
        time = max(time, arrival)
        heapq.heappush(heap, (size, job))
    while heap:
        remaining, head = heapq.heappop(heap)
        time += remaining
        completion[head] = time
    return completion


def srpt1_mean_response_time(arrival_times: np.ndarray, sizes: np.ndarray) -> float:
    """Mean response time of SRPT-1 on the given job stream."""
    return float((srpt1_completion_times(arrival_times, sizes) - np.asarray(arrival_times)).mean())
