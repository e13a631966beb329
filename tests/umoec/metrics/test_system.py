"""System samples (umoec/metrics/system.py): real values for this process, None (never a
made-up 0) for what cannot be read."""
from umoec.metrics.system import SystemSampler


def test_sample_measures_this_process_and_the_disk(tmp_path):
    s = SystemSampler(tmp_path)
    sum(i * i for i in range(200_000))        # some CPU work between two samples
    out = s.sample()
    assert out["rss_bytes"] > 10_000_000 and out["disk_free_bytes"] > 0
    assert out["cpu_percent"] >= 0 and out["gpu_util"] is None and out["gpu_mem_bytes"] is None


def test_gpu_probe_values_and_failures(tmp_path):
    s = SystemSampler(tmp_path, gpu=lambda: (87.0, 3 << 30))
    assert (s.sample()["gpu_util"], s.sample()["gpu_mem_bytes"]) == (87.0, 3 << 30)

    def broken():
        raise RuntimeError("NVML: driver not loaded")
    s.gpu = broken
    out = s.sample()
    assert out["gpu_util"] is None and out["rss_bytes"] > 0     # training goes on
    gone = SystemSampler(tmp_path / "no-such-folder").sample()
    assert gone["disk_free_bytes"] is None and gone["cpu_percent"] is not None
