"""The codec: one probability path, rANS/tANS entropy coders, the .umc container, baselines.

    from umoec.codec import compress, decompress, CodecSettings, Order2Predictor
    blob = compress(data, Order2Predictor(), CodecSettings(streams=16))
    assert decompress(blob, Order2Predictor()) == data

See docs/codec.md for the container layout and the measured numbers.
"""
from .codec import CodecSettings, CodecStats, compress, config_hash, decompress, read_header
from .container import Header
from .errors import (CodecError, CoderUnavailable, DecodeMismatch, FingerprintMismatch, FormatError,
                     IntegrityError, ProbabilityError)
from .predictor import BOS, AdaptivePredictor, Order2Predictor, Predictor
from .probs import freqs_to_cdf, logits_to_freqs

__all__ = [
    "BOS", "AdaptivePredictor", "CodecError", "CodecSettings", "CodecStats", "CoderUnavailable",
    "DecodeMismatch", "FingerprintMismatch", "FormatError", "Header", "IntegrityError",
    "Order2Predictor", "Predictor", "ProbabilityError", "compress", "config_hash", "decompress",
    "freqs_to_cdf", "logits_to_freqs", "read_header",
]
