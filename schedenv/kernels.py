"""Helpers the families' compiled kernels share: views without reference counts, cache prefetches and
a memmove.

numba counts the references of every array variable, and the batched envs' ``step_rows`` step B copies
whose state outgrows the caches, one copy a stride after the other (which the hardware prefetchers do
not follow). ``borrowed`` views make the counts no-ops; ``prefetch_row`` / ``prefetch_entry`` ask for
the next copy's cache lines while the current one steps. Neither changes a result
(docs/architecture.md, "The batched envs"). ``move_entries`` copies overlapping ranges of an array with
one ``memmove`` (LLVM does not vectorise the element loop whose source and destination overlap). Used by
``schedenv.multiserver.kernel`` and ``schedenv.moldable.kernel``.
"""

from __future__ import annotations

from llvmlite import binding, ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def _pointer(typingctx, address):
    """The ``void*`` at the integer ``address``."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return types.voidptr(address), codegen


PREFETCH_INTRINSIC = "llvm.prefetch.p0" if binding.llvm_version_info[0] >= 17 else "llvm.prefetch.p0i8"
"""``llvm.prefetch``'s name mangled for its pointer argument: opaque pointers from LLVM 17 (``p0``), typed
``i8*`` before (``p0i8``, the LLVM of numba 0.59 to 0.61)."""


@intrinsic
def _prefetch(typingctx, address):
    """Ask the caches for the 64-byte line at the integer ``address`` (LLVM's ``llvm.prefetch``: a hint,
    never a fault, no effect on results)."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        byte_pointer, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        function_type = ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32])
        prefetch = cgutils.get_or_insert_function(builder.module, function_type, PREFETCH_INTRINSIC)
        builder.call(prefetch, [builder.inttoptr(args[0], byte_pointer), i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return types.void(address), codegen


@njit(cache=True, inline="always")
def prefetch_row(array, i, lines):
    """Prefetch the first ``lines`` cache lines of ``array[i]`` (``array`` C-contiguous)."""
    start = array.ctypes.data + i * array.strides[0]
    for line in range(lines):
        _prefetch(start + 64 * line)  # type: ignore[call-arg]  # numba supplies typingctx


@njit(cache=True, inline="always")
def prefetch_entry(array, i, j):
    """Prefetch the cache line of ``array[i, j]`` (``array`` C-contiguous, two-dimensional)."""
    _prefetch(array.ctypes.data + i * array.strides[0] + j * array.strides[1])  # type: ignore[call-arg]  # as above


@njit(cache=True, inline="always")
def borrowed(array):
    """A view of the C-contiguous ``array`` that holds no reference to its memory, for a loop that the
    caller keeps ``array`` alive around.

    numba counts the references of every array variable: each array argument of an inlined call
    (``decide``, ``pack``, ``advance``) costs an atomic increment and decrement per call, which its
    pruning pass rarely removes in a loop. On borrowed views the counts are no-ops that LLVM drops;
    they made up about half the fast path's time per epoch.
    """
    if not array.flags.c_contiguous:
        raise ValueError("borrowed: the array must be C-contiguous")
    return carray(_pointer(array.ctypes.data), array.shape, array.dtype)  # type: ignore[call-arg]  # numba supplies typingctx


@intrinsic
def _move(typingctx, destination, source, size):
    """Copy ``size`` bytes from the integer address ``source`` to ``destination`` (LLVM's ``llvm.memmove``:
    the ranges may overlap)."""
    if not all(isinstance(value, types.Integer) for value in (destination, source, size)):
        return None

    def codegen(context, builder, signature, args):
        void_pointer = context.get_value_type(types.voidptr)
        to, start = builder.inttoptr(args[0], void_pointer), builder.inttoptr(args[1], void_pointer)
        cgutils.raw_memmove(builder, to, start, args[2], 1)
        return context.get_dummy_value()

    return types.void(destination, source, size), codegen


@njit(cache=True, inline="always")
def move_entries(flat, to, start, count):
    """``flat[to : to + count] = flat[start : start + count]`` for the C-contiguous ``flat`` (one dimension),
    the ranges possibly overlapping, as one ``memmove``."""
    base, size = flat.ctypes.data, flat.itemsize
    _move(base + to * size, base + start * size, count * size)  # type: ignore[call-arg]  # numba supplies typingctx
