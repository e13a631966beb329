"""The fast chunked scan and the causal conv agree with their slow references; gradients check."""
import pytest
import torch
import torch.nn.functional as F

from umoec.model.conv import causal_conv
from umoec.model.scan import spread_rows, ssd_chunked, ssd_reference, ssd_step


def scan_inputs(B=2, T=37, H=3, P=4, N=5, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, H, P, generator=gen, dtype=dtype)
    dt = F.softplus(torch.randn(B, T, H, generator=gen, dtype=dtype) - 1)
    A = -torch.rand(H, generator=gen, dtype=dtype) * 4 - 0.1
    Bm = torch.randn(B, T, N, generator=gen, dtype=dtype)
    Cm = torch.randn(B, T, N, generator=gen, dtype=dtype)
    D = torch.randn(H, generator=gen, dtype=dtype)
    return x, dt, A, Bm, Cm, D


@pytest.mark.parametrize("T,chunk", [(1, 32), (7, 32), (32, 32), (37, 8), (100, 32), (64, 16)])
def test_chunked_scan_matches_reference(T, chunk):
    args = scan_inputs(T=T)
    fast = ssd_chunked(*args, chunk=chunk)
    slow = ssd_reference(*args)
    assert fast.shape == slow.shape == args[0].shape
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-4)


def test_chunked_scan_is_independent_of_chunk_length():
    args = scan_inputs(T=96, dtype=torch.float64)
    ref = ssd_chunked(*args, chunk=96)
    for chunk in (1, 5, 16, 32):
        torch.testing.assert_close(ssd_chunked(*args, chunk=chunk), ref, atol=1e-10, rtol=1e-10)


def test_chunked_scan_gradient_check():
    inputs = [t.clone().requires_grad_()
              for t in scan_inputs(B=1, T=11, H=2, P=2, N=3, dtype=torch.float64)]
    assert torch.autograd.gradcheck(lambda *a: ssd_chunked(*a, chunk=4), inputs)


def test_causal_conv_matches_conv1d_and_gradient_check():
    gen = torch.Generator().manual_seed(1)
    for K in (1, 2, 4):
        x = torch.randn(2, 9, 5, generator=gen, dtype=torch.float64, requires_grad=True)
        w = torch.randn(5, K, generator=gen, dtype=torch.float64, requires_grad=True)
        b = torch.randn(5, generator=gen, dtype=torch.float64, requires_grad=True)
        ref = F.conv1d(F.pad(x.transpose(1, 2), (K - 1, 0)), w.unsqueeze(1), b,
                       groups=5).transpose(1, 2)
        torch.testing.assert_close(causal_conv(x, w, b), ref)
        assert torch.autograd.gradcheck(causal_conv, (x, w, b))


def test_causal_conv_shorter_than_kernel():
    x = torch.randn(1, 2, 3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(causal_conv, (x, w, b))


def test_spread_rows_step_moves_only_the_chosen_streams():
    x, dt, A, Bm, Cm, D = scan_inputs(B=5, T=1, N=6)
    state = torch.randn(5, 6, 3, 4, generator=torch.Generator().manual_seed(2))
    state[0, 0, 0, 0] = -0.0
    rows = torch.tensor([1, 3, 4])
    sub = state[rows].clone()
    want = ssd_step(sub, x[rows, 0], dt[rows, 0], A, Bm[rows, 0], Cm[rows, 0], D)
    before = state.clone()
    args = [spread_rows(v[rows, 0], rows, 5) for v in (x, dt)] + [A] + [
        spread_rows(v[rows, 0], rows, 5) for v in (Bm, Cm)] + [D]
    got = ssd_step(state, *args).index_select(0, rows)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(state[rows], sub, atol=1e-6, rtol=1e-6)
    for r in (0, 2):   # dt = 0: decay exactly 1, input exactly 0
        assert torch.equal(state[r], before[r])
