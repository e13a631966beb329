"""Stream and block geometry: contiguous balanced streams, prefix of active streams, blocks."""
import pytest

from tests.umoec.codec.helpers import pseudo_random_bytes
from umoec.codec.layout import Layout


@pytest.mark.parametrize("size", [0, 1, 2, 7, 8, 9, 63, 64, 65, 1000])
@pytest.mark.parametrize("streams", [1, 3, 8, 64])
def test_streams_are_contiguous_balanced_and_invertible(size, streams):
    lay = Layout(size, streams, 256)
    data = pseudo_random_bytes(size)
    m = lay.to_matrix(data)
    assert m.shape == (streams, lay.steps)
    assert lay.from_matrix(m) == data
    lengths = lay.lengths()
    assert lengths.sum() == size and lengths.max() - lengths.min() <= 1
    offset = 0
    for i, n in enumerate(lengths):            # row i is the i-th contiguous segment
        assert m[i, :n].tobytes() == data[offset:offset + n]
        offset += n


@pytest.mark.parametrize("size,streams,block", [(1000, 3, 256), (256, 1, 256), (257, 1, 256),
                                                (255, 1, 256), (5, 64, 256), (100000, 7, 4096)])
def test_blocks_cover_every_step_once_with_prefix_counts(size, streams, block):
    lay = Layout(size, streams, block)
    covered, symbols = 0, 0
    for b in range(lay.n_blocks):
        t0, t1 = lay.block_steps(b)
        assert t0 == covered and t1 > t0
        counts = lay.counts(t0, t1)
        assert (counts[:-1] >= counts[1:]).all() and counts.min() >= 1
        assert lay.block_symbols(b) == (int(counts.sum()), int(counts[0]))
        covered, symbols = t1, symbols + int(counts.sum())
    assert covered == lay.steps and symbols == size


def test_block_boundaries():
    assert Layout(0, 4, 256).n_blocks == 0
    assert Layout(256, 1, 256).n_blocks == 1 and Layout(257, 1, 256).n_blocks == 2
    assert Layout(1024, 4, 256).n_blocks == 4 and Layout(1025, 4, 256).n_blocks == 5
    assert Layout(3, 1000, 256).steps_per_block == 1
