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
        self.event_ms = 0.0  # GPU time an event record adds (a real event pair reads the launch around a kernel)
        self.kernels: list[tuple[str, float, float]] = []  # (name, start ms, end ms): what CUPTI would record

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
                self.kernel("unit", 1.0)

    def kernel(self, name: str, ms: float) -> None:
        start = self.clock
        self.enqueue(ms)
        self.kernels.append((name, start, self.clock))


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
            gpu.enqueue(gpu.event_ms)
            self.t = gpu.clock

        def synchronize(self):
            gpu.blocked = False

        done = True

    def raw_kernel(source, name):
        def blocking_kernel(grid, block, args):
            gpu.blocks += 1
            gpu.blocked, gpu.queued, gpu.flag_addr = True, 0, int(args[1])
            gpu.kernels.append(("kg_block_stream", gpu.clock, gpu.clock))

        def read_flush(grid, block, args):  # the read flush: one kernel that loads the whole buffer
            gpu.flushes += 1
            gpu.kernel("kg_l2_read", 0.5)

        def drain(grid, block, args):  # the cupti-drained timer's spin: args[0] ns of GPU time
            gpu.kernel("kg_drain", int(args[0]) / 1e6)
        return {"kg_l2_read": read_flush, "kg_drain": drain}.get(name, blocking_kernel)

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


class FakeCuptiApi:
    """CUPTI's activity API over the fake GPU's kernel log: enable, flush (records through the callback, in ns,
    in an order of its own), disable."""

    ActivityKind = types.SimpleNamespace(CONCURRENT_KERNEL=10, MEMCPY=1, MEMSET=2)

    def __init__(self, gpu: FakeGPU, streams=(7,)) -> None:
        self.gpu, self.streams = gpu, streams
        self.enabled: set[int] = set()
        self.mark = 0
        self.flushes = 0

    def activity_register_callbacks(self, requested, completed):
        self.requested, self.completed = requested, completed

    def activity_enable(self, kind):
        if not self.enabled:
            self.mark = len(self.gpu.kernels)
        self.enabled.add(kind)

    def activity_disable(self, kind):
        self.enabled.discard(kind)

    def activity_flush_all(self, flag):
        self.flushes += 1
        assert self.requested() == (8 << 20, 0)
        new = self.gpu.kernels[self.mark:]
        self.mark = len(self.gpu.kernels)
        records = [types.SimpleNamespace(kind=10, name=name, start=round(a * 1e6), end=round(b * 1e6),
                                         stream_id=self.streams[i % len(self.streams)])
                   for i, (name, a, b) in enumerate(new)]
        records.append(types.SimpleNamespace(kind=99, name="other kind", start=0, end=1, stream_id=7))
        self.completed(list(reversed(records)))  # CUPTI's buffer order is not the GPU's


def test_cupti_cold_samples_read_the_kernels_not_the_event_pair(env):
    from kgpubench.measure.backends.cupti_clock import CuptiActivity

    ct, gpu = env
    gpu.event_ms = 0.25  # each event record costs GPU time, as the launch around a cold kernel does
    api = FakeCuptiApi(gpu)
    flusher = ct.L2Flusher(50 << 20, "read")
    events = ct.CupySampler(unit_of(gpu, 2, declare=True), method="cold", launches=1, blocker=ct.Blocker(),
                            flusher=flusher)
    assert events.method == "cold" and events.run(3) == [2.25] * 3  # 2 launches of 1 ms plus the end event
    cupti = ct.CupySampler(unit_of(gpu, 2, declare=True), method="cold", launches=1, blocker=ct.Blocker(),
                           flusher=flusher, activity=CuptiActivity(api))
    assert cupti.method == "cupti"
    assert cupti.run(12) == pytest.approx([2.0] * 12)  # first start to last end of the unit's two kernels
    # 12 samples of 5 queue entries in rounds of at most 30: two rounds, each collected and flushed
    assert api.flushes == 2 and not api.enabled
    cupti.close()
    assert not api.enabled and api.flushes == 2  # nothing left to flush at close


def test_cupti_records_split_over_streams_fail_the_configuration_in_one_line(env):
    from kgpubench.errors import LaunchFailed
    from kgpubench.measure.backends.cupti_clock import CuptiActivity

    ct, gpu = env
    s = ct.CupySampler(unit_of(gpu, 1, declare=True), method="cold", launches=1, blocker=ct.Blocker(),
                       flusher=ct.L2Flusher(50 << 20, "read"), activity=CuptiActivity(FakeCuptiApi(gpu, (1, 2))))
    with pytest.raises(LaunchFailed, match="on 2 streams, not 3 on one .*--cold-timer events"):
        s.run(3)


@pytest.mark.parametrize("method, mode", [("graph", "read"), ("cold", "write")])
def test_cupti_is_refused_where_no_flush_kernel_marks_the_samples(env, method, mode):
    from kgpubench.measure.backends.cupti_clock import CuptiActivity

    ct, gpu = env
    with pytest.raises(ValueError, match="CUPTI times cold samples with the read flush only"):
        ct.CupySampler(unit_of(gpu, 1), method=method, launches=1, blocker=ct.Blocker(),
                       flusher=ct.L2Flusher(50 << 20, mode), activity=CuptiActivity(FakeCuptiApi(gpu)))


def test_cupti_samples_are_also_read_by_their_own_event_pairs_when_asked(env):
    """The proof's same-sample comparison: the event pair of every CUPTI-timed sample, and the flush gap."""
    from kgpubench.measure.backends.cupti_clock import CuptiActivity, same_samples

    ct, gpu = env
    gpu.event_ms = 0.25
    pairs: list = []
    s = ct.CupySampler(unit_of(gpu, 2, declare=True), method="cold", launches=1, blocker=ct.Blocker(),
                       flusher=ct.L2Flusher(50 << 20, "read"), activity=CuptiActivity(FakeCuptiApi(gpu)), pairs=pairs)
    assert s.run(12) == pytest.approx([2.0] * 12)
    assert len(pairs) == 12
    assert [p.cupti_ms for p in pairs] == pytest.approx([2.0] * 12)
    assert [p.events_ms for p in pairs] == pytest.approx([2.25] * 12)  # the same executions, the end event too
    assert [p.flush_gap_ms for p in pairs] == pytest.approx([0.25] * 12)  # the start event between flush and unit
    got = same_samples(pairs)
    assert got["cupti_longer"] == 0 and got["events_minus_cupti_median_us"] == pytest.approx(250.0)


def test_the_drained_timer_waits_after_every_flush_outside_the_span(env):
    from kgpubench.measure.backends.cupti_clock import CuptiActivity

    ct, gpu = env
    with pytest.raises(ValueError, match="a wait after the flush \\(drain_us\\) needs the read flush"):
        ct.L2Flusher(50 << 20, "write", drain_us=15.0)
    flusher = ct.L2Flusher(50 << 20, "read", drain_us=1500.0)  # 1.5 ms: visible against the fake's 1 ms launches
    assert flusher.entries == 2 and ct.L2Flusher(50 << 20, "read").entries == 1
    pairs: list = []
    s = ct.CupySampler(unit_of(gpu, 2, declare=True), method="cold", launches=1, blocker=ct.Blocker(),
                       flusher=flusher, activity=CuptiActivity(FakeCuptiApi(gpu)), pairs=pairs)
    assert s.run(12) == pytest.approx([2.0] * 12)  # the unit's span, not the wait
    assert [p.flush_gap_ms for p in pairs] == pytest.approx([1.5] * 12)  # the spin, then a start event of 0 ms
    assert [name for name, _a, _b in gpu.kernels].count("kg_drain") == 12
    # 6 queue entries a sample (flush, spin, 2 events, 2 launches) in rounds of at most 30: 5 a round, 3 rounds
    # (without the spin counted, 6 a round and 2 rounds)
    assert gpu.blocks == 3 and gpu.timeouts == 0
