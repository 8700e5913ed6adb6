"""Argument checks shared by every family (docs/envs/index.md: bad configuration fails at construction).

Every error names the parameter, the offending value and what is allowed, so that a user who
mistypes an argument learns the fix from the message alone.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np


class UnknownArgumentError(TypeError, ValueError):
    """An argument the callee does not take: a TypeError like Python's own, and a ValueError so that
    whatever catches bad configuration (the command line, a sweep) catches it as well.

    Its message begins as Python's own does (``MalleableEnv.__init__() got an unexpected keyword
    argument 'frameskip'``), because libraries that pass optional Gymnasium arguments to every env
    read it to drop them: TorchRL's ``GymEnv`` passes ``frameskip`` and, on that message, takes it out
    and skips frames itself (see the TorchRL page of the docs, docs/interop/torchrl.md).
    """


EnvClass = TypeVar("EnvClass", bound=type)


def reject_unknown_kwargs(cls: EnvClass) -> EnvClass:
    """Class decorator: an unknown keyword argument to ``cls(...)`` is refused with the accepted names.

    ``gym.make(id, **kwargs)`` hands the kwargs to the env's constructor (its own arguments such as
    ``max_episode_steps`` are taken out first), and the batched envs pass theirs on to the single env,
    so decorating each env class covers both. The check runs in ``__new__``, before ``__init__``, so
    ``__init__`` keeps its signature and the warnings it raises still point at the caller; a subclass
    is checked against its own ``__init__`` (one taking ``**kwargs`` accepts anything).
    """

    def checked_new(klass: type, *args: Any, **kwargs: Any) -> Any:
        accepted = _keyword_parameters(klass)
        unknown = [] if accepted is None else [name for name in kwargs if name not in accepted]
        if unknown:
            name, names = unknown[0], list(accepted or ())
            raise UnknownArgumentError(
                f"{klass.__name__}.__init__() got an unexpected keyword argument {name!r} "
                f"({name}={kwargs[name]!r}){suggest(name, names)}; it accepts {names}"
            )
        return object.__new__(klass)

    cls.__new__ = checked_new  # type: ignore[assignment]
    return cls


@functools.cache
def _keyword_parameters(klass: type) -> tuple[str, ...] | None:
    """The keyword arguments ``klass.__init__`` takes (None when it takes ``**kwargs``)."""
    parameters = inspect.signature(klass.__init__).parameters  # type: ignore[misc]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return None
    return tuple(
        name for name, p in parameters.items() if name != "self" and p.kind is not inspect.Parameter.VAR_POSITIONAL
    )


def refuse_ignored(cls: type, because: str, values: Mapping[str, Any]) -> None:
    """Refuse the arguments of ``values`` that differ from their defaults in ``cls.__init__``: ``because``
    (e.g. explicit ``jobs``) makes them moot, and an argument silently ignored would leave the user
    believing it took effect."""
    parameters = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    changed = [name for name, value in values.items() if not _is_default(value, parameters[name].default)]
    if changed:
        given = ", ".join(f"{name}={values[name]!r}" for name in changed)
        one = len(changed) == 1
        raise ValueError(
            f"{given} {'is' if one else 'are'} not allowed with {because}: {'it is' if one else 'they are'} unused "
            f"then and would be silently ignored; drop {' and '.join(changed)}"
        )


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):  # arrays and the like compare element-wise
        return False


def suggest(value: str, choices: Iterable[str]) -> str:
    """A ``did you mean ...?`` suffix naming the nearest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(value, list(choices), n=3, cutoff=0.5)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def check_choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming the near matches."""
    if not isinstance(value, str) or value not in allowed:
        hint = suggest(value, allowed) if isinstance(value, str) else ""
        raise ValueError(f"{name}={value!r} is not allowed; choose one of {list(allowed)}{hint}")
    return value


def check_positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float if it is a finite (or, if allowed, infinite) number > 0."""
    number = _as_real(name, value)
    if not number > 0 or (math.isinf(number) and not allow_inf):
        allowed = "a positive number" + (" or inf" if allow_inf else " (finite)")
        raise ValueError(f"{name}={value!r} is not allowed; it must be {allowed}")
    return number


SCALE_RANGE = (1e-100, 1e100)
"""Range of every scale a model takes: job sizes and durations, distribution means and bounds, a
malleable system's server count, Downey's A and sigma. The models multiply or square two scales
(variances, size over speed, A times sigma), so a scale outside this range would overflow float64
to inf or underflow to 0 (a reward of -inf, a NaN speedup, a division by zero); 1e+/-100 leaves
100 orders of magnitude of headroom on either side."""

MAX_TIME_RATIO = 1e12
"""Largest ratio of an explicit job set's horizon (latest arrival plus total size) to its smallest
size: beyond it float64 clocks (16 significant digits) cannot resolve the smallest job against the
clock, and its response time would come out as 0 (a slowdown below 1)."""


def check_scale(name: str, value: Any) -> float:
    """Return ``value`` if it is a positive number inside ``SCALE_RANGE``."""
    number = check_positive(name, value)
    low, high = SCALE_RANGE
    if not low <= number <= high:
        raise ValueError(
            f"{name}={value!r} is not allowed; it must lie in [{low:g}, {high:g}] (SCALE_RANGE: beyond it the "
            "model's products of two scales leave float64)"
        )
    return number


def check_scale_array(name: str, values: Any) -> np.ndarray:
    """``check_positive_array`` with every entry inside ``SCALE_RANGE``."""
    array = check_positive_array(name, values)
    low, high = SCALE_RANGE
    bad = (array < low) | (array > high)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}[{index}]={float(array[index])!r} is not allowed; entries must lie in [{low:g}, {high:g}] "
            "(SCALE_RANGE: beyond it the model's products of two scales leave float64)"
        )
    return array


def check_time_resolution(
    name: str, arrivals: np.ndarray, sizes: np.ndarray, shortest: np.ndarray | None = None
) -> None:
    """Refuse a job set whose shortest job float64 cannot resolve against its horizon (``MAX_TIME_RATIO``).

    The horizon is bounded by the latest arrival plus the total size (every job run one after another);
    ``shortest`` is each job's shortest possible run time when it differs from its size (a moldable job
    on many processors), else the sizes themselves.
    """
    horizon = float(np.max(arrivals, initial=0.0)) + float(np.sum(sizes))
    times, what = (sizes, "smallest size") if shortest is None else (shortest, "shortest run time")
    index = int(np.argmin(times))
    smallest = float(times[index])
    if not horizon <= MAX_TIME_RATIO * smallest:
        raise ValueError(
            f"{name} is not allowed: its horizon (latest arrival + total size = {horizon:g}) exceeds "
            f"{MAX_TIME_RATIO:g} times its {what} (job {index}: {smallest:g}), which float64 times cannot "
            "resolve; rescale the sizes or split the job set"
        )


MAX_MEAN_HORIZON = 1e9
"""Largest expected length of a drawn Poisson stream in mean job times: n_arrivals / load (the stream
spans n_arrivals / lambda = n_arrivals / load mean service times). Float64 then resolves a job of mean
size to about 1e-7 of itself, and one 1000 times shorter still to 1e-4; beyond it short jobs' response
times lose their digits (at load=1e-300 every response time comes out as 0 and the mean slowdown as 0)."""


def check_stream_horizon(load: float, n_arrivals: int) -> None:
    """Refuse a load so low that ``n_arrivals`` Poisson arrivals outrun float64 clocks (``MAX_MEAN_HORIZON``)."""
    if n_arrivals > MAX_MEAN_HORIZON * load:
        raise ValueError(
            f"load={load!r} is not allowed with n_arrivals={n_arrivals}: the stream would span about "
            f"n_arrivals / load = {n_arrivals / load:.3g} mean job times, more than {MAX_MEAN_HORIZON:g} "
            f"(MAX_MEAN_HORIZON), beyond which float64 clocks cannot resolve short jobs; use load >= "
            f"{n_arrivals / MAX_MEAN_HORIZON:.3g} or fewer arrivals"
        )


def check_nonnegative(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a finite number >= 0."""
    number = _as_real(name, value)
    if not (number >= 0 and math.isfinite(number)):
        raise ValueError(f"{name}={value!r} is not allowed; it must be a finite number >= 0")
    return number


def check_probability(name: str, value: Any, *, open_low: bool = True, open_high: bool = False) -> float:
    """Return ``value`` if it lies in the unit interval (ends open or closed as asked)."""
    number = _as_real(name, value)
    low_ok = number > 0 if open_low else number >= 0
    high_ok = number < 1 if open_high else number <= 1
    if not (low_ok and high_ok):
        interval = ("(" if open_low else "[") + "0, 1" + (")" if open_high else "]")
        raise ValueError(f"{name}={value!r} is not allowed; it must lie in {interval}")
    return number


MAX_JOBS = 10**7
"""Cap on job counts drawn at reset (``n_jobs``, ``n_arrivals``): the per-job arrays (about 100 bytes a
job across a family's state) are allocated up front, so 10**7 jobs already take about 1 GB; larger
counts are refused at construction instead of failing with MemoryError at reset."""

MAX_WINDOW = 2**16
"""Cap on the observation window ``max_jobs``: the observation, mask and action arrays grow with it
(Moldable's flat action space with ``max_jobs * n_procs`` entries), so 65536 slots is far beyond any
agent's use and still allocates."""


MAX_SERVERS = 2**16
"""Cap on integer server, host and processor counts (``n_servers``, ``n_hosts``, ``n_procs``): the
observation and per-server arrays grow with them (Moldable keeps per-count runtime tables), so
65536 is far beyond the papers' systems (128 processors, 4-64 servers) and still allocates."""


def check_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` if it is an integer >= ``minimum`` (and <= ``maximum`` if given; bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name}={value!r} is not allowed; it must be an integer >= {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(
            f"{name}={value!r} is not allowed; it must be an integer in {minimum}..{maximum} "
            "(the arrays it sizes would not fit in memory)"
        )
    return int(value)


def read_only(array: np.ndarray) -> np.ndarray:
    """``array`` itself, made non-writeable (the state views and copies that envs hand to policies)."""
    array.flags.writeable = False
    return array


def check_flag(name: str, value: Any) -> bool:
    """Return ``value`` as a Python bool if it is one (NumPy's ``np.bool_`` included; 0 and 1 are refused)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}={value!r} is not allowed; it must be True or False")
    return bool(value)


def check_action_index(action: Any, n_actions: int) -> int:
    """A ``Discrete(n_actions)`` action as a Python int: one integer (Python or NumPy, a 0-d or 1-element
    array; not a bool) in [0, ``n_actions``)."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        index = int(action)  # plain ints (what masked samplers and baselines give) skip numpy's conversion
    else:
        value = np.asarray(action)
        if value.size != 1 or value.dtype.kind not in "iu":
            raise ValueError(f"action={action!r} is not allowed; it must be one integer in [0, {n_actions})")
        index = int(value.reshape(()))
    if not 0 <= index < n_actions:
        raise ValueError(f"action={index} is out of range; it must lie in [0, {n_actions})")
    return index


def is_seed(value: Any) -> bool:
    """An integer >= 0 (Python or NumPy; not a boolean), as ``np.random.default_rng`` takes."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and bool(value >= 0)


def check_seed(seed: Any) -> int | None:
    """``seed`` for ``reset`` as a Python integer (or None), refusing what :func:`is_seed` refuses.

    Every single env checks its seed here, so that it accepts exactly the seeds a native batched env
    accepts for one copy (NumPy integers included, booleans refused) and refuses the others with a
    ValueError naming ``seed`` (docs/envs/index.md), not Gymnasium's own error class.
    """
    if seed is None:
        return None
    if not is_seed(seed):
        raise ValueError(f"seed={seed!r} is not allowed; give an integer >= 0 or None")
    return int(seed)


def as_real_array(name: str, values: Any, *, allow_bool: bool = False) -> np.ndarray:
    """``values`` as a float64 array, refusing what is not an array of real numbers.

    Refused, naming ``name``: strings, mappings, ragged nesting, complex numbers (NumPy would drop the
    imaginary part), objects, and booleans unless ``allow_bool`` (``[True, True]`` is not a list of sizes).
    """
    if isinstance(values, (str, bytes, Mapping)):
        raise ValueError(f"{name}={values!r} is not allowed; it must be an array of real numbers")
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name}={values!r} is not allowed; it must be an array of real numbers with one shape (not ragged)"
        ) from error
    kinds = "iuf" + ("b" if allow_bool else "")
    if not allow_bool and raw.dtype.kind in "iuf" and isinstance(values, (list, tuple)) and _holds_bool(values):
        raise ValueError(f"{name}={values!r} is not allowed; it holds booleans, and must be an array of real numbers")
    if raw.dtype.kind not in kinds:
        what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes"}.get(raw.dtype.kind, "objects")
        raise ValueError(f"{name}={values!r} is not allowed; it holds {what}, and must be an array of real numbers")
    return raw.astype(np.float64, copy=False)


def _holds_bool(values: Any) -> bool:
    """Whether a nested list holds a boolean (NumPy reads ``[(0.0, True)]`` as floats)."""
    if isinstance(values, (list, tuple)):
        return any(_holds_bool(value) for value in values)
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "b"
    return isinstance(values, (bool, np.bool_))


def check_positive_array(name: str, values: Any) -> np.ndarray:
    """Return ``values`` as a 1-D float64 array of finite positive numbers (at least one)."""
    array = as_real_array(name, values)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {array.shape}")
    bad = ~(np.isfinite(array) & (array > 0))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{index}]={float(array[index])!r} is not allowed; every entry must be finite and > 0")
    return array


def _as_real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name}={value!r} is not allowed; it must be a real number")
    try:
        number = float(value)
    except OverflowError:  # an int beyond float64 (about 1.8e308)
        raise ValueError(f"{name}={value} is not allowed; it lies beyond the float64 range (about 1.8e308)") from None
    if math.isnan(number):
        raise ValueError(f"{name}=nan is not allowed; it must be a real number")
    return number


def check_sampled(name: str, values: Any, count: int, *, source: Any = None) -> np.ndarray:
    """The gate for sampled sizes: ``count`` finite positive values inside ``SCALE_RANGE`` as float64.

    Whatever a distribution (a user's ``Distribution`` subclass), generator or trace hands a family
    passes here once, where it enters the workload, so that a NaN, 0, negative, infinite or
    out-of-range size is refused naming the argument and the value instead of hanging a simulator,
    dividing by zero or turning rewards NaN.
    """
    low, high = SCALE_RANGE
    allowed = f"every draw must be a finite number in [{low:g}, {high:g}] (SCALE_RANGE)"
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(
            f"{_origin(name, source)} returned {values!r}, which is not an array of numbers; {allowed}"
        ) from error
    if array.shape != (count,):
        raise ValueError(
            f"{_origin(name, source)} returned {array.size} values of shape {array.shape} when asked for {count}; "
            f"sample(rng, size) must return an array of shape ({count},)"
        )
    with np.errstate(invalid="ignore"):
        bad = ~((array >= low) & (array <= high))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{_origin(name, source)} returned {float(array[index])!r} (draw {index}); {allowed}")
    return array


def _origin(name: str, source: Any) -> str:
    """``name`` and, when given, the ``source`` it came from, for ``check_sampled``'s errors (a source's repr is
    built only when a draw is refused: every reset passes the gate)."""
    return f"{name} from {source!r}" if source is not None else name
