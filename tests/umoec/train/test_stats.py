"""Hidden-state statistics written every eval_every."""
import torch

from umoec.train.stats import activation_stats, pca_points


def test_activation_stats_of_known_rms():
    h = torch.ones(2, 5, 4) * torch.arange(1, 11).float().reshape(2, 5, 1)  # RMS = 1..10
    s = activation_stats(h)
    assert s["mean"] == 5.5 and s["p50"] == 5.5
    assert s["p1"] < s["p25"] < s["p50"] < s["p75"] < s["p99"]


def test_pca_separates_two_clusters_along_pc1():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(100, 16, generator=g) * 0.1
    b = torch.randn(100, 16, generator=g) * 0.1 + 5.0
    pts = pca_points(torch.cat([a, b]).reshape(2, 100, 16))
    assert pts.shape == (200, 2)
    assert (pts[:100, 0].mean() - pts[100:, 0].mean()).abs() > 10 * pts[:, 1].std()


def test_pca_samples_at_most_200_and_is_deterministic():
    h = torch.randn(4, 300, 8, generator=torch.Generator().manual_seed(1))
    assert pca_points(h).shape == (200, 2)
    assert torch.equal(pca_points(h), pca_points(h))
    assert pca_points(torch.randn(1, 1, 8)).shape == (1, 2)
