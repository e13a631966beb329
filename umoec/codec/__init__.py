"""The codec: one probability path, rANS/tANS entropy coders, the .umc container, baselines.

    from umoec.codec import compress, decompress, CodecSettings
    from umoec.predict.order2 import Order2Predictor          # any entropy model (umoec/predict/)
    blob = compress(data, Order2Predictor(), CodecSettings(streams=16))
    assert decompress(blob, Order2Predictor()) == data

See docs/codec.md for the container layout and the measured numbers.
"""
from .codec import CodecSettings, CodecStats, compress, config_hash, decompress, read_header
from .container import Header
from .errors import (
                     CodecError,
                     CoderUnavailable,
                     DecodeMismatch,
                     FingerprintMismatch,
                     FormatError,
                     IntegrityError,
                     ProbabilityError,
)
from .probs import freqs_to_cdf, logits_to_freqs

__all__ = [
    "CodecError", "CodecSettings", "CodecStats", "CoderUnavailable",
    "DecodeMismatch", "FingerprintMismatch", "FormatError", "Header", "IntegrityError",
    "ProbabilityError", "compress", "config_hash", "decompress",
    "freqs_to_cdf", "logits_to_freqs", "read_header",
]
