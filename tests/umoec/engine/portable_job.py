"""One "machine" of the portability test: `python portable_job.py MODEL.umm INPUTS OUT REF`.

Compresses every file in INPUTS with every profile into OUT, decodes every .umc file in REF
(written by another configuration) and checks it against INPUTS, then prints a JSON report.
The configuration under test is this process's environment (SIMD dispatch, BLAS kernel and
threads, compiled or numpy kernels, products on torch's CPU kernels), set by
tests/umoec/engine/test_portable.py; the report says what the process really used.
"""
import json
import sys
from pathlib import Path

from umoec.compress.api import compress_bytes, decompress_bytes
from umoec.compress.profiles import PROFILES
from umoec.engine import kernels, split
from umoec.engine import modelfile as mf


def main(model_path: str, inputs: str, out: str, ref: str) -> None:
    model = mf.read(Path(model_path))
    src, dst, refd = Path(inputs), Path(out), Path(ref)
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        for name in PROFILES:
            (dst / f"{f.name}.{name}.umc").write_bytes(
                compress_bytes(f.read_bytes(), model, profile=name))
    decoded = []
    for umc in sorted(refd.glob("*.umc")) if refd.is_dir() else []:
        original = (src / umc.name.rsplit(".", 2)[0]).read_bytes()
        if decompress_bytes(umc.read_bytes(), model) != original:
            raise SystemExit(f"{umc.name}: decoded bytes differ")
        decoded.append(umc.name)
    import numpy as np

    from umoec.codec import cm
    from umoec.engine import device
    torch = sys.modules.get("torch")      # imported only for device products
    print(json.dumps({"decoded": decoded, "kernels": kernels.backend(), "cm": cm.backend(),
                      "products": kernels.mm8_path() if kernels.use_mm8() else "blas",
                      "numpy": np.__version__, "children": split.started(),
                      "device": device.products().name if device.products() else None,
                      "aten": torch.backends.cpu.get_cpu_capability() if torch else None}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
