"""Model tests run single-threaded: small tensors gain nothing from a second thread, and on a
shared machine OpenMP's spin-waiting can make them many times slower."""
import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
