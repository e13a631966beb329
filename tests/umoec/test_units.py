"""Units: ln 2, bits per byte, and the size and count texts the cockpit and `umc` show."""
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from umoec.units import FILE_UNITS, LN2, bpb, fmt_bytes, fmt_count, nats_to_bits


def test_ln2_is_the_correctly_rounded_value():
    assert LN2 == math.log(2.0) == 0.6931471805599453


def test_nats_to_bits_divides_by_ln2_also_element_wise():
    assert nats_to_bits(LN2) == 1.0 and nats_to_bits(0.0) == 0.0
    assert nats_to_bits(2.0) == 2.0 / math.log(2.0)
    loss = np.array([0.5, 1.0, 5.545])
    assert np.array_equal(nats_to_bits(loss), loss / math.log(2.0))


def test_bpb_is_eight_times_packed_over_raw_and_zero_for_an_empty_input():
    assert bpb(100, 800) == 1.0 and bpb(1000, 1000) == 8.0 and bpb(3, 7) == 8 * 3 / 7
    assert bpb(0, 0) == 0.0 and bpb(50, 0) == 0.0
    assert bpb(np.int64(3), np.int64(7)) == 8 * 3 / 7 and bpb(3, np.int64(0)) == 0.0
    packed, raw = pd.Series([100.0, 3.0]), pd.Series([800, 7])
    assert bpb(packed, raw).tolist() == [1.0, 8.0 * 3.0 / 7]


@pytest.mark.parametrize("n,text", [
    (0, "0 B"), (512, "512 B"), (999, "999 B"), (1000, "1 KB"), (1234, "1.23 KB"),
    (999_999, "1e+03 KB"), (8_192_000, "8.19 MB"), (3.5e9, "3.5 GB"), (2e12, "2 TB"),
    (5e15, "5e+03 TB"), (-2048, "-2.05 KB"),
])
def test_fmt_bytes_default_three_significant_digits(n, text):
    assert fmt_bytes(n) == text


@pytest.mark.parametrize("n,two_decimals,one_decimal", [
    (0, "0 B", "0 B"), (999, "999 B", "999 B"), (999.7, "1,000 B", "1000 B"),
    (1000, "1.00 kB", "1.0 kB"), (3000, "3.00 kB", "3.0 kB"), (1_234_567, "1.23 MB", "1.2 MB"),
    (60_000, "60.00 kB", "60.0 kB"), (2_500_000_000, "2.50 GB", "2.5 GB"),
    (1_234_000_000_000, "1,234.00 GB", "1234.0 GB"),
])
def test_fmt_bytes_for_file_sizes(n, two_decimals, one_decimal):
    assert fmt_bytes(n, ",.2f", FILE_UNITS) == two_decimals   # upload limits (gui/services/uploads.py)
    assert fmt_bytes(n, ".1f", FILE_UNITS) == one_decimal     # `umc model list`


@pytest.mark.parametrize("n,text", [
    (0, "0"), (12, "12"), (0.5, "0.5"), (999, "999"), (1234, "1.23 k"), (1_570_000, "1.57 M"),
    (5.6e6, "5.6 M"), (2.5e9, "2.5 G"), (7e12, "7 T"), (3e15, "3 P"), (4e18, "4 E"),
])
def test_fmt_count_si_prefixes(n, text):
    assert fmt_count(n) == text


def test_units_imports_nothing_heavy():
    code = ("import sys, umoec.units; "
            "print(sorted(m for m in ('numpy', 'torch', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
