"""Units the project reports in: nats and bits, bits per byte, sizes and counts as text.

- The training loss is in nats per byte; in bits per byte (bpb) it is loss / ln 2 (`nats_to_bits`).
- A compressed size is reported as bpb = 8 * packed / raw (`bpb`): 8.0 means no compression.
- Sizes are shown in decimal units, 1 MB = 10^6 bytes (`fmt_bytes`); counts with SI prefixes
  (`fmt_count`).

A leaf module (standard library only), shared by the trainer, the codec, the CLIs and the cockpit.
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from decimal import Decimal

LN2 = float(Decimal(2).ln())  # ln 2, correctly rounded without libm (equal to math.log(2.0))

BYTE_UNITS = ("B", "KB", "MB", "GB", "TB")  # the cockpit's cards and tables
FILE_UNITS = ("B", "kB", "MB", "GB")          # file sizes: upload limits, `umc model list`


def nats_to_bits(x):
    """`x` nats in bits (x / ln 2): a loss in nats per byte becomes bits per byte. Element-wise on
    numpy arrays and pandas Series."""
    return x / LN2


def bpb(packed_bytes, raw_bytes):
    """Bits of output per byte of input, 8 * packed / raw; 0.0 for an empty input (raw 0).

    Element-wise on numpy arrays and pandas Series too, whose raw sizes must then be non-zero.
    """
    if isinstance(raw_bytes, numbers.Number):
        return 8.0 * packed_bytes / raw_bytes if raw_bytes else 0.0
    return 8.0 * packed_bytes / raw_bytes


def fmt_bytes(n: float, spec: str = ".3g", units: Sequence[str] = BYTE_UNITS) -> str:
    """`n` bytes in the largest decimal unit it reaches (1 KB = 10^3 bytes), the number formatted
    with `spec`; below the first unit, whole bytes (with `spec`'s thousands separator, if any).

    `units` names bytes and then each power of 1000; its last is the largest unit used.

        fmt_bytes(8_192_000) == "8.19 MB"        fmt_bytes(512) == "512 B"
        fmt_bytes(1_234_567, ",.2f", FILE_UNITS) == "1.23 MB"
        fmt_bytes(1_234_567, ".1f", FILE_UNITS) == "1.2 MB"
    """
    n = float(n)
    for power in range(len(units) - 1, 0, -1):
        scale = 1000.0 ** power
        if abs(n) >= scale:
            return f"{n / scale:{spec}} {units[power]}"
    return f"{n:{',' if ',' in spec else ''}.0f} {units[0]}"


def fmt_count(n: float) -> str:
    """1234 -> '1.23 k', 5.6e6 -> '5.6 M' (SI prefixes, three significant digits)."""
    n = float(n)
    for unit, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.3g}"
