"""Training threads from the load: the start count, changes when other processes take or free a
core, a fixed count (hardware.threads, OMP_NUM_THREADS) never changed."""
from umoec.train.threads import ThreadGovernor, fixed_threads


class Machine:
    """A fake clock and CPU-time counters: advance(seconds, others_cores, mine_cores)."""

    def __init__(self):
        self.t, self.busy, self.mine = 0.0, 0.0, 0.0

    def advance(self, seconds, others, mine):
        self.t += seconds
        self.busy += seconds * (others + mine)
        self.mine += seconds * mine

    def governor(self, setting=0, env=None, cpus=2):
        return ThreadGovernor(setting, cpus=cpus, env=env or {}, clock=lambda: self.t,
                              cpu_seconds=lambda: (self.busy, self.mine), interval_s=5.0)


def test_a_core_taken_costs_a_thread_and_comes_back_when_freed():
    m = Machine()
    g = m.governor()
    assert g.start(others=0.1) == 2 and g.auto
    m.advance(3, others=0.0, mine=2.0)
    assert g.poll() is None                        # not yet an interval
    m.advance(3, others=1.0, mine=1.0)             # a CPU-bound process arrived
    assert g.poll() is None                        # half the interval: 0.5 cores, within the margin
    m.advance(5, others=1.0, mine=1.0)
    change = g.poll()
    assert change.threads == 1 and g.threads == 1 and change.others == 1.0
    assert change.text(2).startswith("threads 2 -> 1: other processes used")
    m.advance(5, others=1.0, mine=1.0)
    assert g.poll() is None                        # still busy: no flapping
    m.advance(5, others=0.0, mine=1.0)             # it ended
    assert g.poll().threads == 2


def test_start_under_load_and_on_one_core():
    m = Machine()
    assert m.governor().start(others=1.0) == 1
    assert m.governor(cpus=1).start(others=0.0) == 1
    assert m.governor(cpus=8).start(others=2.6) == 5


def test_a_fixed_count_is_kept():
    m = Machine()
    g = m.governor(setting=2)
    assert g.start(others=1.9) == 2 and not g.auto and g.describe() == "2 threads (fixed)"
    m.advance(10, others=2.0, mine=2.0)
    assert g.poll() is None
    assert m.governor(env={"OMP_NUM_THREADS": "3"}).start(others=0.0) == 3
    assert fixed_threads(0, {"OMP_NUM_THREADS": "junk"}) is None
    assert fixed_threads(4, {"OMP_NUM_THREADS": "1"}) == 4   # the config's own setting first
