"""Trace files: ``.swf.gz`` (how the Parallel Workloads Archive ships its logs) reads in both families
that replay SWF, and MultiserverJob recognises a trace's format by content, refusing an unknown one
clearly instead of reading any non-``.swf`` path as the Alibaba CSV (``KeyError: 'num_gpu'``)."""

from __future__ import annotations

import gzip
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import schedenv  # noqa: F401  (registers the env ids)
from schedenv.moldable.env import MoldableEnv
from schedenv.multiserver.trace import read_swf_jobs, trace_format
from schedenv.traces import read_replay, read_swf

pytestmark = pytest.mark.filterwarnings("ignore::schedenv.traces.SWFSkipWarning")  # the fixture's 2 invalid jobs

SWF_FIXTURE = Path(__file__).parents[1] / "multiserver" / "fixtures" / "small.swf"


@pytest.fixture
def packed(tmp_path: Path) -> Path:
    path = tmp_path / "small.swf.gz"
    path.write_bytes(gzip.compress(SWF_FIXTURE.read_bytes()))
    return path


def test_gzip_swf_reads_as_the_plain_file_in_every_reader(packed: Path, tmp_path: Path) -> None:
    renamed = tmp_path / "renamed.log"  # compression is recognised by content, not by name
    renamed.write_bytes(packed.read_bytes())
    plain = read_swf(SWF_FIXTURE)
    for path in (packed, renamed):
        np.testing.assert_array_equal(read_swf(path).data, plain.data)
        for mine, theirs in zip(read_swf_jobs(path, 8), read_swf_jobs(SWF_FIXTURE, 8), strict=True):
            np.testing.assert_array_equal(mine, theirs)
        assert read_replay(path).submit.tolist() == read_replay(SWF_FIXTURE).submit.tolist()
        assert trace_format(str(path)) == "swf"


def test_gzip_swf_replays_in_moldable_and_multiserver(packed: Path) -> None:
    moldable_plain, moldable_packed = MoldableEnv(trace=str(SWF_FIXTURE)), MoldableEnv(trace=str(packed))
    assert moldable_packed.fixed_jobs is not None and moldable_plain.fixed_jobs is not None
    np.testing.assert_array_equal(moldable_packed.fixed_jobs.L, moldable_plain.fixed_jobs.L)
    env = gym.make("schedenv/MultiserverJob-v0", trace=str(packed), n_servers=6, load=0.8)
    reference = gym.make("schedenv/MultiserverJob-v0", trace=str(SWF_FIXTURE), n_servers=6, load=0.8)
    for mine, theirs in zip(env.unwrapped.jobs, reference.unwrapped.jobs, strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_multiserver_refuses_a_trace_of_unknown_format_naming_what_it_found(tmp_path: Path) -> None:
    other_csv = tmp_path / "jobs.csv"
    other_csv.write_text("job,gpus,start\n1,2,3\n")
    with pytest.raises(ValueError, match=r"trace='.*jobs\.csv' is not allowed: its first line 'job,gpus,start' is "):
        gym.make("schedenv/MultiserverJob-v0", trace=str(other_csv))
    words = tmp_path / "notes.txt"
    words.write_text("hello world\n")
    with pytest.raises(ValueError, match=r"neither SWF .* nor the Alibaba GPU CSV"):
        gym.make("schedenv/MultiserverJob-v0", trace=str(words))
    broken = tmp_path / "broken.swf.gz"
    broken.write_bytes(gzip.compress(SWF_FIXTURE.read_bytes())[:40])
    with pytest.raises(ValueError, match=r"cannot be read"):
        gym.make("schedenv/MultiserverJob-v0", trace=str(broken))
    with pytest.raises(FileNotFoundError, match=r"'/nonexistent\.swf\.gz' not found"):
        gym.make("schedenv/MultiserverJob-v0", trace="/nonexistent.swf.gz")
