"""A torch model in step form drives the codec through StepModelPredictor (no trained net needed)."""
import torch

from tests.umoec.codec.helpers import TEXT
from umoec.codec import CodecSettings, FingerprintMismatch, compress, decompress
from umoec.predict.protocol import Predictor
from umoec.predict.torch_step import StepModelPredictor, model_fingerprint


class TinyStepModel(torch.nn.Module):
    def __init__(self, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.emb = torch.nn.Parameter(torch.randn(256, 16, generator=g))
        self.out = torch.nn.Parameter(torch.randn(16, 256, generator=g))

    def init_state(self, batch_size, g=None):
        return torch.zeros(batch_size, 16)

    def step(self, byte, state):
        h = torch.tanh(self.emb[byte] + 0.5 * state)
        return h @ self.out, h


def predictor(model):
    return StepModelPredictor(model, model_fingerprint(model, {"d": 16}, threads=1))


def test_torch_model_roundtrip_and_fingerprint():
    model = TinyStepModel()
    p = predictor(model)
    assert isinstance(p, Predictor)
    blob = compress(TEXT, p, CodecSettings(streams=3, block_size=256))
    assert decompress(blob, predictor(TinyStepModel())) == TEXT
    other = TinyStepModel()
    with torch.no_grad():
        other.out[0, 0] += 1e-6
    try:
        decompress(blob, predictor(other))
        raise AssertionError("a changed weight must be refused")
    except FingerprintMismatch:
        pass
    assert model_fingerprint(model, {"d": 16}, threads=2) != model_fingerprint(model, {"d": 16}, threads=1)
