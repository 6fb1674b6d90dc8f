"""Protocol-2 samplers on a real GPU (CuPy): CUDA graphs, a blocking kernel, an L2 flush, CUDA events.

How one round of samples runs (:meth:`CupySampler.run`):

1. The host sets a flag in mapped (pinned) host memory to 0 and launches the *blocking kernel* on the
   sampler's stream; it spins on the flag (reading ``%globaltimer``, it gives up after ``timeout_s`` and says
   so in a second flag).
2. The host enqueues every sample of the round behind it: ``[flush] event unit... event`` (``graph``: one
   replay of a captured graph of ``launches`` units; ``batch``: ``launches`` direct calls; ``cold``: an L2
   flush, then one call between its own pair of events).
3. The host releases the flag: the GPU runs the round back to back, whatever the host's launch rate was.
4. One synchronisation, then the event pairs give the sample times.

A round that the blocking kernel's timeout cut short (the host enqueued more than the device queue holds) is
run again with half the samples. A unit whose one sample alone holds more queue entries than fit behind the
blocking kernel (``fn.queue_entries`` says how many launches one call makes, else a one-sample round timed out)
is timed ``stream``: event pairs on the stream with no blocking kernel, the host enqueueing ahead of the GPU as
fast as it can (such a sample can include gaps where the host fell behind; the rows say ``timing_method =
stream``). A blocking kernel that gives up costs ``TIMEOUT_S``. CuPy is imported inside the functions that use
it.

Cold samples have three timers (``CupyBackend(cold_timer=...)``): ``events``, the event pair around each call (rows
``timing_method = cold``; it reads the launch too, about 2 us on an H200), ``cupti``, the kernels' own GPU
timestamps from CUPTI's activity records (rows ``timing_method = cupti``; see
:mod:`kgpubench.measure.backends.cupti_clock`), and ``cupti-drained``, as ``cupti`` with a spin kernel of
:data:`DRAIN_US` between the flush and the unit (``[flush, spin, event, unit, event]``), so that lines the flush
evicted have time to be written back before the unit starts; CUPTI's span of the unit does not include the spin.
Its rows also record ``timing_method = cupti`` (the column has no value of its own for it yet). With a CUPTI
timer the event pairs are still recorded: ``CupyBackend.cold_pairs`` (a list, when set) receives every sample
read both ways (:class:`~kgpubench.measure.backends.cupti_clock.PairedSample`; warm-up samples and rounds the
clock watch drops included), for the proof's same-sample comparison (``benchmarks/timing_agreement.py``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from kgpubench.measure.backends.base import CaptureUnsupported
from kgpubench.measure.backends.cupti_clock import (
    BLOCKING_KERNEL,
    DRAIN_KERNEL,
    FLUSH_KERNEL,
    CuptiActivity,
    PairedSample,
    round_samples,
)

BLOCKING_SOURCE = r"""
extern "C" __global__ void kg_block_stream(volatile int* release, volatile int* timed_out,
                                           unsigned long long timeout_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*release == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) { *timed_out = 1; return; }
    }
}
"""
# Queue entries (launches, event records, memsets) one round may put behind the blocking kernel: CUDA's
# pending-launch queue holds about 1024; beyond it the host would block while the GPU waits for the host.
MAX_QUEUED = 600
TIMEOUT_S = 1.0  # a round of MAX_QUEUED entries is enqueued in milliseconds


class Blocker:
    """The blocking kernel and its two flags in mapped host memory (one per backend)."""

    def __init__(self) -> None:
        import cupy

        rt = cupy.cuda.runtime
        self._ptr = rt.hostAlloc(8, getattr(rt, "hostAllocMapped", 2))  # cudaHostAllocMapped = 0x02
        try:  # with unified addressing (every 64-bit platform CUDA supports) both pointers are the same
            self._dev = int(rt.pointerGetAttributes(self._ptr).devicePointer) or self._ptr
        except Exception:  # noqa: BLE001 - an older binding without it: the host pointer is the device's
            self._dev = self._ptr
        self._release = ctypes.c_int32.from_address(self._ptr)
        self._timed_out = ctypes.c_int32.from_address(self._ptr + 4)
        self._kernel = cupy.RawKernel(BLOCKING_SOURCE, BLOCKING_KERNEL)

    def block(self, stream: Any, timeout_s: float = TIMEOUT_S) -> None:
        """Launch the blocking kernel on ``stream`` (it must be CuPy's current stream: RawKernel launches there)."""
        import numpy as np

        self._release.value = 0
        self._timed_out.value = 0
        self._kernel((1,), (1,), (np.uint64(self._dev), np.uint64(self._dev + 4), np.uint64(int(timeout_s * 1e9))))

    def release(self) -> None:
        self._release.value = 1

    @property
    def timed_out(self) -> bool:
        return bool(self._timed_out.value)


READ_FLUSH_SOURCE = r"""
extern "C" __global__ void kg_l2_read(const unsigned long long* __restrict__ p, unsigned long long n,
                                      unsigned long long* sink) {
    unsigned long long acc = 0;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        acc += p[i];
    }
    if (acc == 0x5bd1e9955bd1e995ULL) { *sink = acc; }  /* never true (the buffer is zero): keeps the loads */
}
"""
DRAIN_SOURCE = r"""
extern "C" __global__ void kg_drain(unsigned long long wait_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < wait_ns);
}
"""
FLUSH_MODES = ("write", "read")
# how a cold sample is timed: its event pair, CUPTI's kernel records, or those with a wait after the flush
COLD_TIMERS = ("events", "cupti", "cupti-drained")
# The cupti-drained timer's wait between the flush and the unit: the time to write a whole L2 of dirty lines
# back to memory (about 12 us on an H200, docs/GPU_SESSION.md), with a margin
DRAIN_US = 15.0


class L2Flusher:
    """Evicts whatever a kernel left in L2 by streaming a buffer of twice the L2 size through it.

    ``read`` (the default: a kernel that loads the buffer) leaves clean lines, as a cache invalidation does;
    ``write`` (``cudaMemsetAsync``, the flush before 2026-11-26) leaves the L2 full of dirty lines, which the
    timed kernel must write back as it evicts them. On an H200 (benchmarks/results/h200-2026-11-26) the write
    flush put cold kernels 2 to 9 us above Nsight Compute's ``--cache-control all``, the read flush 2 to 3 us
    (what remains is the event pair around one launch). ``benchmarks/timing_agreement.py --flush-modes``
    compares them.
    """

    def __init__(self, l2_bytes: int | None, mode: str = "read", drain_us: float = 0.0) -> None:
        if mode not in FLUSH_MODES:
            raise ValueError(f"unknown L2 flush mode {mode!r}; use one of {', '.join(FLUSH_MODES)}")
        if drain_us and mode != "read":
            raise ValueError("a wait after the flush (drain_us) needs the read flush (CUPTI marks samples by it)")
        import cupy

        self.mode = mode
        self.drain_us = float(drain_us)  # a spin kernel of this long after every flush (0: none)
        self._drain = cupy.RawKernel(DRAIN_SOURCE, DRAIN_KERNEL) if drain_us > 0 else None
        self.entries = 2 if self._drain is not None else 1  # queue entries one flush takes
        self.nbytes = max(2 * int(l2_bytes or 0), 8 << 20)
        self._buf = cupy.zeros(self.nbytes, dtype=cupy.uint8)
        self._value = 0
        self._sink = cupy.zeros(1, dtype=cupy.uint64)
        self._kernel = cupy.RawKernel(READ_FLUSH_SOURCE, FLUSH_KERNEL) if mode == "read" else None
        sms = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.runtime.getDevice()).get("multiProcessorCount", 132)
        self._grid = (int(sms) * 8,)

    def flush(self, stream: Any) -> None:
        import cupy
        import numpy as np

        if self._kernel is not None:  # launches on CuPy's current stream, which the sampler holds
            self._kernel(self._grid, (256,), (self._buf, np.uint64(self.nbytes // 8), self._sink))
            if self._drain is not None:  # one thread spinning: the memory system is left to drain
                self._drain((1,), (1,), (np.uint64(int(self.drain_us * 1000)),))
            return
        self._value ^= 1  # alternate the value: no write is ever a no-op
        cupy.cuda.runtime.memsetAsync(self._buf.data.ptr, self._value, self.nbytes, stream.ptr)


class CupySampler:
    """A :class:`kgpubench.measure.timing.Sampler` for one unit of work on the GPU."""

    def __init__(self, fn: Callable[[], None], *, method: str, launches: int, blocker: Blocker,
                 flusher: L2Flusher | None, activity: CuptiActivity | None = None,
                 pairs: list[PairedSample] | None = None) -> None:
        import cupy

        if method not in ("graph", "batch", "cold"):
            raise ValueError(f"unknown timing method {method!r}")
        if activity is not None and (method != "cold" or flusher is None or flusher.mode != "read"):
            raise ValueError("CUPTI times cold samples with the read flush only (its kernel marks the samples)")
        self.method = "cupti" if activity is not None else method
        self.launches = 1 if method == "cold" else int(launches)
        self._cold = method == "cold"  # an L2 flush and an event pair around every single call
        self._fn, self._blocker, self._flusher = fn, blocker, flusher
        self._activity = activity  # cold samples timed by CUPTI's kernel records instead of their event pairs
        self._pairs = pairs  # where CUPTI's samples go read both ways too (the proof's same-sample comparison)
        self._unit_entries = max(1, int(getattr(fn, "queue_entries", 1)))  # launches one call of fn enqueues
        self._stream = cupy.cuda.Stream(non_blocking=True)
        self._graph = None
        if method == "graph":
            self._graph = self._capture()
        elif self._entries_per_sample() > MAX_QUEUED:
            self.method = "stream"  # one sample alone overflows the queue behind the blocking kernel

    def _capture(self) -> Any:
        import cupy

        stream = self._stream
        try:
            with stream:
                stream.begin_capture()
                try:
                    for _ in range(self.launches):
                        self._fn()
                finally:
                    graph = stream.end_capture()
            upload = getattr(graph, "upload", None)
            if upload is not None:
                upload(stream)
        except Exception as exc:  # noqa: BLE001 - any capture failure means "time it another way"
            stream.synchronize()
            raise CaptureUnsupported(f"the unit cannot be captured in a CUDA graph ({type(exc).__name__}: "
                                     f"{str(exc)[:200]})") from exc
        cupy.cuda.runtime.streamSynchronize(stream.ptr)
        return graph

    def _entries_per_sample(self) -> int:
        if self.method == "graph":
            return 2
        if self.method in ("batch", "stream"):
            return self.launches * self._unit_entries + 1
        return 2 + self._unit_entries + (self._flusher.entries if self._flusher else 0)

    def run(self, samples: int) -> list[float]:
        out: list[float] = []
        per_round = max(1, MAX_QUEUED // self._entries_per_sample())
        while len(out) < samples:
            n = min(per_round, samples - len(out))
            times = self._round(n)
            if times is None:  # the blocking kernel gave up: the host could not keep the queue ahead
                if n == 1:  # a single sample overflows the queue: time it on the stream, unblocked
                    self.method = "stream"
                per_round = max(1, n // 2)
                continue
            out.extend(times)
        return out

    def _enqueue(self, n: int) -> list[tuple[Any, Any]]:
        """Enqueue ``n`` samples on the stream; the (start, end) event pair of each."""
        import cupy

        stream = self._stream
        if self._cold:
            pairs = []
            for _ in range(n):
                if self._flusher is not None:
                    self._flusher.flush(stream)
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                start.record(stream)
                self._fn()
                end.record(stream)
                pairs.append((start, end))
            return pairs
        events = [cupy.cuda.Event()]
        events[0].record(stream)
        for _ in range(n):
            if self._graph is not None:
                self._graph.launch(stream)
            else:
                for _ in range(self.launches):
                    self._fn()
            ev = cupy.cuda.Event()
            ev.record(stream)
            events.append(ev)
        return list(zip(events[:-1], events[1:]))

    def _round(self, n: int) -> list[float] | None:
        stream = self._stream
        if self.method == "stream":
            return self.collect(self.submit(n))
        if self._activity is not None:  # before the blocking kernel: enabling CUPTI may wait for the GPU
            self._activity.start()
        with stream:
            self._blocker.block(stream)
            try:
                pairs = self._enqueue(n)
            finally:
                self._blocker.release()
        pairs[-1][1].synchronize()
        if self._blocker.timed_out:
            return None
        return self.collect(pairs)

    # -- asynchronous rounds (power windows keep the queue full with these; no blocking kernel) --------------
    def submit(self, samples: int) -> list[tuple[Any, Any]]:
        """Enqueue ``samples`` samples and return at once (a handle for :meth:`ready` / :meth:`collect`)."""
        if self._activity is not None:
            self._activity.start()
        with self._stream:
            return self._enqueue(samples)

    def ready(self, pending: list[tuple[Any, Any]]) -> bool:
        return bool(pending[-1][1].done)

    def collect(self, pending: list[tuple[Any, Any]]) -> list[float]:
        import cupy

        pending[-1][1].synchronize()
        if self._activity is not None:  # the kernels' own GPU timestamps, not the event pairs around them
            samples = round_samples(self._activity.stop(), len(pending))
            if self._pairs is not None:  # the same executions between their own event pairs
                self._pairs.extend(PairedSample(s.span_ms, float(cupy.cuda.get_elapsed_time(a, b)), s.flush_gap_ms)
                                   for s, (a, b) in zip(samples, pending))
            return [s.span_ms for s in samples]
        return [float(cupy.cuda.get_elapsed_time(a, b)) for a, b in pending]

    def close(self) -> None:
        self._graph = None
        self._stream.synchronize()
        if self._activity is not None:
            self._activity.stop()
