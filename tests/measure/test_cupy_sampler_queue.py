"""The CuPy samplers' round logic against a simulated device queue (no GPU): a unit whose one sample holds more
launches than fit behind the blocking kernel must be timed ``stream`` instead of re-trying a round forever (a
real H100 hung in the npb GPU test that way)."""

import ctypes
import sys
import types

import pytest


class FakeGPU:
    """A device queue of ``capacity`` entries; 1 ms of GPU time per kernel launch."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.queued = 0
        self.blocked = False
        self.flag_addr = 0
        self.clock = 0.0
        self.capture: list | None = None
        self.blocks = self.timeouts = self.flushes = 0

    def enqueue(self, ms: float = 0.0) -> None:
        self.queued += 1
        if self.blocked and self.queued > self.capacity:  # the host would wait: the blocking kernel gives up
            ctypes.c_int32.from_address(self.flag_addr).value = 1
            self.blocked = False
            self.timeouts += 1
        self.clock += ms

    def launch(self, n: int = 1) -> None:
        for _ in range(n):
            if self.capture is not None:
                self.capture.append(1)
            else:
                self.enqueue(1.0)


def fake_cupy(gpu: FakeGPU) -> types.ModuleType:
    keep: list = []

    class Stream:
        def __init__(self, non_blocking=False):
            self.ptr = 1

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def begin_capture(self):
            gpu.capture = []

        def end_capture(self):
            graph = Graph(len(gpu.capture))
            gpu.capture = None
            return graph

        def synchronize(self):
            gpu.blocked = False

    class Graph:
        def __init__(self, n):
            self.n = n

        def launch(self, stream):
            gpu.enqueue(float(self.n))

    class Event:
        def record(self, stream=None):
            gpu.enqueue()
            self.t = gpu.clock

        def synchronize(self):
            gpu.blocked = False

        done = True

    def raw_kernel(source, name):
        def blocking_kernel(grid, block, args):
            gpu.blocks += 1
            gpu.blocked, gpu.queued, gpu.flag_addr = True, 0, int(args[1])

        def read_flush(grid, block, args):  # the read flush: one kernel that loads the whole buffer
            gpu.flushes += 1
            gpu.enqueue()
        return read_flush if name == "kg_l2_read" else blocking_kernel

    def host_alloc(nbytes, flags):
        buf = ctypes.create_string_buffer(nbytes)
        keep.append(buf)
        return ctypes.addressof(buf)

    def memset_async(ptr, value, nbytes, stream):
        gpu.flushes += 1
        gpu.enqueue()

    runtime = types.SimpleNamespace(hostAlloc=host_alloc, hostAllocMapped=2, streamSynchronize=lambda s: None,
                                    pointerGetAttributes=lambda p: types.SimpleNamespace(devicePointer=p),
                                    memsetAsync=memset_async, getDevice=lambda: 0,
                                    getDeviceProperties=lambda d: {"multiProcessorCount": 132})
    cuda = types.SimpleNamespace(Stream=Stream, Event=Event, runtime=runtime,
                                 get_elapsed_time=lambda a, b: b.t - a.t)
    mod = types.ModuleType("cupy")
    mod.cuda, mod.RawKernel = cuda, raw_kernel
    mod.empty = mod.zeros = lambda n, dtype=None: types.SimpleNamespace(data=types.SimpleNamespace(ptr=0))
    mod.uint8, mod.uint64 = "uint8", "uint64"
    return mod


@pytest.fixture
def env(monkeypatch):
    import kgpubench.measure.backends.cupy_timing as ct

    gpu = FakeGPU(capacity=40)  # a margin above MAX_QUEUED, as on a real GPU
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(gpu))
    monkeypatch.setattr(ct, "MAX_QUEUED", 30)
    return ct, gpu


def unit_of(gpu, launches, declare=False):
    def unit():
        gpu.launch(launches)
    if declare:
        unit.queue_entries = launches
    return unit


def test_small_units_are_timed_behind_the_blocking_kernel_in_full_rounds(env):
    ct, gpu = env
    s = ct.CupySampler(unit_of(gpu, 2, declare=True), method="batch", launches=3, blocker=ct.Blocker(), flusher=None)
    # 3 units x 2 launches + 1 event = 7 entries a sample: 4 samples a round of at most 30 entries
    assert s.run(10) == [6.0] * 10
    assert s.method == "batch" and gpu.blocks == 3 and gpu.timeouts == 0


def test_declared_long_unit_is_timed_on_the_stream_without_the_blocking_kernel(env):
    ct, gpu = env
    s = ct.CupySampler(unit_of(gpu, 100, declare=True), method="batch", launches=1, blocker=ct.Blocker(),
                       flusher=None)
    assert s.method == "stream"
    assert s.run(3) == [100.0, 100.0, 100.0]
    assert gpu.blocks == 0 and gpu.timeouts == 0


def test_undeclared_long_unit_falls_back_to_stream_after_one_single_sample_timeout(env):
    ct, gpu = env
    s = ct.CupySampler(unit_of(gpu, 100), method="batch", launches=1, blocker=ct.Blocker(), flusher=None)
    assert s.method == "batch"
    assert s.run(2) == [100.0, 100.0]  # finishes (it used to retry a one-sample round forever)
    # round of 2 timed out, round of 1 timed out, then unblocked
    assert s.method == "stream" and gpu.timeouts == 2 and gpu.blocks == 2


def test_a_long_unit_in_a_graph_stays_behind_the_blocking_kernel(env):
    ct, gpu = env
    s = ct.CupySampler(unit_of(gpu, 100, declare=True), method="graph", launches=2, blocker=ct.Blocker(),
                       flusher=None)
    assert s.run(20) == [200.0] * 20  # one graph launch + one event a sample: 15 samples a round
    assert s.method == "graph" and gpu.blocks == 2 and gpu.timeouts == 0


@pytest.mark.parametrize("mode", ["read", "write"])
def test_cold_long_unit_keeps_a_flush_before_every_sample_when_unblocked(env, mode):
    ct, gpu = env
    flusher = ct.L2Flusher(50 << 20, mode)
    assert flusher.mode == mode and flusher.nbytes == 100 << 20
    s = ct.CupySampler(unit_of(gpu, 40, declare=True), method="cold", launches=1, blocker=ct.Blocker(),
                       flusher=flusher)
    assert s.method == "stream"
    assert s.run(4) == [40.0] * 4
    assert gpu.flushes == 4 and gpu.blocks == 0


def test_the_read_flush_is_the_default_and_an_unknown_mode_is_refused_before_cupy_is_needed(env):
    ct, gpu = env
    assert ct.L2Flusher(50 << 20).mode == "read"  # the write flush left dirty lines (timing_agreement.py)
    with pytest.raises(ValueError, match="unknown L2 flush mode 'evict'; use one of write, read"):
        ct.L2Flusher(50 << 20, "evict")
    from kgpubench.measure.backends.cupy_backend import CupyBackend

    with pytest.raises(ValueError, match="unknown L2 flush mode 'memset'"):
        CupyBackend(l2_flush="memset")
