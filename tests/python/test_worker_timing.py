"""The Python worker's CUDA timing (python/tipbench_worker/timing.py) on a stand-in device, since a
CPU has none: the stand-in queues each step's work on a stream and runs it later, as a GPU does,
so the test sees what the worker's method measures. It must time as the harness times its own
steps (harness/device/src/step_timer.cpp, trial.cpp): the events made before the first step, one untimed
step left queued before the first timed one, an event after each step on the current stream, one
synchronisation on the last event before any elapsed time is read; and its memory as the
harness's probe reads the caching allocator (the whole trial's peak and the timed steps' own).
Run: python3 tests/python/test_worker_timing.py (ctest: WorkerTiming.*)."""
import importlib
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))


class StandInDevice:
    """One CUDA stream of a device: work is enqueued (the host goes on at once) and done later.
    An event records the device time at which the work queued before it is done; its elapsed time
    is readable only once the device got there and the host synchronised on it, as with CUDA."""

    def __init__(self):
        self.queued_ms = 0.0  # device time when everything enqueued so far is done
        self.done_ms = 0.0    # device time the host has waited for (synchronize)
        self.steps = 0
        self.log = []         # what the host did, in order
        self.allocated = 0
        self.peak = 0
        self.reserved = 0
        self.reserved_peak = 0

    def enqueue(self, ms):
        self.queued_ms += ms

    def allocate(self, nbytes):
        self.allocated += nbytes
        self.reserved = max(self.reserved, self.allocated)
        self.peak = max(self.peak, self.allocated)
        self.reserved_peak = max(self.reserved_peak, self.reserved)

    def free(self, nbytes):
        self.allocated -= nbytes

    def empty_cache(self):
        """Cached blocks go back to the device: reserved falls to what is allocated."""
        self.reserved = self.allocated
        self.log.append("empty_cache")


class StandInEvent:
    def __init__(self, device, enable_timing=False):
        assert enable_timing, "an event made without timing cannot be read"
        self.device = device
        self.at_ms = None
        device.log.append("event made")

    def record(self, stream=None):
        self.at_ms = self.device.queued_ms
        self.device.log.append("record")

    def synchronize(self):
        self.device.done_ms = max(self.device.done_ms, self.at_ms)
        self.device.log.append("synchronize")

    def elapsed_time(self, other):
        for e in (self, other):
            if e.at_ms is None or e.at_ms > self.device.done_ms:
                raise RuntimeError("CUDA error: device not ready")
        self.device.log.append("elapsed")
        return other.at_ms - self.at_ms


def stand_in_torch(device):
    cuda = types.SimpleNamespace(
        Event=lambda enable_timing=False: StandInEvent(device, enable_timing),
        current_stream=lambda d=None: types.SimpleNamespace(synchronize=lambda: device.log.append("stream sync")),
        reset_peak_memory_stats=lambda d=None: (setattr(device, "peak", device.allocated),
                                                setattr(device, "reserved_peak", device.reserved)),
        max_memory_allocated=lambda d=None: device.peak,
        empty_cache=lambda: device.empty_cache(),
        max_memory_reserved=lambda d=None: device.reserved_peak,
    )
    return types.SimpleNamespace(cuda=cuda)


class WorkerTiming(unittest.TestCase):
    def setUp(self):
        self.device = StandInDevice()
        sys.modules["torch"] = stand_in_torch(self.device)
        sys.modules.pop("tipbench_worker.timing", None)
        self.timing = importlib.import_module("tipbench_worker.timing")  # against this test's stand-in
        self.cuda = types.SimpleNamespace(type="cuda")

    def tearDown(self):
        sys.modules.pop("torch", None)
        sys.modules.pop("tipbench_worker.timing", None)

    def step_costing(self, costs):
        """A step whose device work takes the next cost in `costs` (ms); the host returns at once."""
        it = iter(costs)

        def step():
            self.device.log.append("step")
            self.device.steps += 1
            self.device.enqueue(next(it))
        return step

    def test_the_timed_steps_device_time_without_the_lead_in_step(self):
        # The lead-in step costs 100 ms, the timed ones 2, 3 and 4: only they are timed.
        times, cpu = self.timing.timed_steps(self.step_costing([100, 2, 3, 4]), self.cuda, 3)
        self.assertEqual(times, [2, 3, 4])
        self.assertEqual(cpu, [])
        self.assertEqual(self.device.steps, 4)

    def test_events_are_made_before_the_steps_and_read_after_one_synchronisation(self):
        self.timing.timed_steps(self.step_costing([1, 1, 1]), self.cuda, 2)
        log = self.device.log
        self.assertLess(max(i for i, x in enumerate(log) if x == "event made"), log.index("step"))
        # The lead-in step is queued after the events and before the first timed event's record.
        first_step = log.index("step")
        self.assertNotIn("synchronize", log[first_step:log.index("record", first_step)])
        # One synchronisation after the last step, then every elapsed time.
        last_step = max(i for i, x in enumerate(log) if x == "step")
        syncs = [i for i, x in enumerate(log) if x == "synchronize"]
        self.assertEqual(len(syncs), 1)
        self.assertGreater(syncs[0], last_step)
        self.assertTrue(all(x == "elapsed" for x in log[syncs[0] + 1:]))

    def test_the_trials_peak_and_the_timed_steps_own(self):
        memory = self.timing.TrialMemory(self.cuda)
        memory.begin()
        self.device.allocate(100)  # the model
        self.device.allocate(500)  # an autotuner's workspace during the warm-up
        self.device.free(500)
        memory.begin_timed()
        self.device.allocate(50)   # the timed steps' activations
        self.device.free(50)
        got = memory.end()
        self.assertEqual(got["peak_allocated_bytes"], 600)
        self.assertEqual(got["timed_peak_allocated_bytes"], 150)

    def test_a_trial_begins_with_the_cache_emptied_as_the_harness_does(self):
        # Blocks cached while preparing (an eager twin's steps) are in no reserved peak (review P2).
        self.device.allocate(800)
        self.device.free(800)
        self.assertEqual(self.device.reserved, 800)
        memory = self.timing.TrialMemory(self.cuda)
        memory.begin()
        self.assertIn("empty_cache", self.device.log)
        self.device.allocate(100)
        memory.begin_timed()
        self.assertEqual(memory.end()["peak_reserved_bytes"], 100)

    def test_a_graph_replaying_trial_reports_its_reserved_peak_only(self):
        # reduce-overhead's activations live in a private pool its replays never allocate from:
        # no allocated peak to compare with eager's (review P1).
        memory = self.timing.TrialMemory(self.cuda, private_pool=True)
        memory.begin()
        self.device.allocate(300)  # the graph's pool, recorded once
        memory.begin_timed()
        self.assertEqual(memory.end(), {"peak_reserved_bytes": 300})


if __name__ == "__main__":
    unittest.main()
