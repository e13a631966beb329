"""Coding model files (.umm): safetensors with the engine's integers, config and description.

Layout (the safetensors format, read and written here without the library, little-endian):
    u64 n, then n bytes of JSON header {tensor: {dtype, shape, data_offsets}, "__metadata__":
    {str: str}}, then the tensors' bytes back to back (sorted by name).
Metadata keys:
    format   "umoec-model/1"
    engine   engine version the integers are for (ENGINE_VERSION)
    hash     the model's identity: sha256 (hex) of format, engine, the network config and every
             tensor (name, dtype, shape, bytes); name and description are not part of it, so a
             renamed copy is the same model
    name     short name for lists and messages
    config   the full training config as JSON (the network sections drive the engine)
    info     JSON: created, source checkpoint/step, corpus summary, measured bpb, description
A file whose tensors do not give its recorded hash is refused as damaged, naming the file.
"""
from __future__ import annotations

import hashlib
import json
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import ENGINE_VERSION

FORMAT = "umoec-model/1"
SUFFIX = ".umm"
MAX_HEADER = 16 << 20
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_DTYPES = {"I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64, "U8": np.uint8,
           "F32": np.float32, "F64": np.float64}
_NAMES = {np.dtype(v).str: k for k, v in _DTYPES.items()}
# network sections: what, besides the tensors, decides the engine's numbers
NETWORK_SECTIONS = ("model", "moe", "mod", "early_exit", "cascade", "conditioning", "patches",
                    "head")


class ModelFileError(ValueError):
    """A model file that cannot be used; the message names the file and the reason."""


@dataclass
class ModelFile:
    name: str
    hash: str                          # hex sha256, the identity
    config: dict                       # the full config as a plain dict
    tensors: dict[str, np.ndarray]
    info: dict = field(default_factory=dict)
    engine: int = ENGINE_VERSION
    path: Path | None = None

    @property
    def short(self) -> str:
        return self.hash[:12]

    def label(self) -> str:
        return f"{self.name} ({self.short})"

    def build_config(self):
        from .. import config as C
        try:
            return C.build(self.config, f"model {self.label()}")
        except C.ConfigError as exc:
            raise ModelFileError(f"model {self.label()}: its config is not valid here: {exc}") from None


def check_name(name: str) -> str:
    if not NAME_RE.match(name or ""):
        raise ModelFileError(f"model name {name!r} must be 1-64 letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit")
    return name


def network_config(config: dict) -> dict:
    return {k: config.get(k) for k in NETWORK_SECTIONS}


def content_hash(config: dict, tensors: dict[str, np.ndarray], engine: int = ENGINE_VERSION) -> str:
    h = hashlib.sha256(f"{FORMAT}\0engine={engine}\0".encode())
    h.update(json.dumps(network_config(config), sort_keys=True, separators=(",", ":")).encode())
    for name in sorted(tensors):
        t = np.ascontiguousarray(tensors[name])
        dt = t.dtype.newbyteorder("<")
        h.update(f"\0{name}|{_NAMES[dt.str]}|{list(t.shape)}\0".encode())
        h.update(t.astype(dt, copy=False).tobytes())
    return h.hexdigest()


def make(name: str, config: dict, tensors: dict, info: dict | None = None) -> ModelFile:
    """A new model (hash computed) from the engine's tensors."""
    tensors = {k: np.ascontiguousarray(v) for k, v in tensors.items()}
    for k, v in tensors.items():
        if v.dtype.newbyteorder("<").str not in _NAMES:
            raise ModelFileError(f"tensor {k} has unsupported dtype {v.dtype}")
    return ModelFile(check_name(name), content_hash(config, tensors), config, tensors,
                     dict(info or {}))


def to_bytes(m: ModelFile) -> bytes:
    header: dict[str, Any] = {}
    parts, pos = [], 0
    for name in sorted(m.tensors):
        t = np.ascontiguousarray(m.tensors[name])
        dt = t.dtype.newbyteorder("<")
        raw = t.astype(dt, copy=False).tobytes()
        header[name] = {"dtype": _NAMES[dt.str], "shape": list(t.shape),
                        "data_offsets": [pos, pos + len(raw)]}
        parts.append(raw)
        pos += len(raw)
    header["__metadata__"] = {
        "format": FORMAT, "engine": str(m.engine), "hash": m.hash, "name": m.name,
        "config": json.dumps(m.config, sort_keys=True, separators=(",", ":")),
        "info": json.dumps(m.info, sort_keys=True, separators=(",", ":"))}
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    return struct.pack("<Q", len(blob)) + blob + b"".join(parts)


def write(m: ModelFile, path: Path) -> Path:
    from ..run.atomic import atomic_write_bytes
    path = Path(path)
    atomic_write_bytes(path, to_bytes(m))
    m.path = path
    return path


def _fail(path, why: str):
    raise ModelFileError(f"model file {path}: {why}")


def read_header(buf: bytes, path: Any = "<bytes>") -> tuple[dict, dict, int]:
    """(tensor entries, metadata, offset of the data) from the start of a model file."""
    if len(buf) < 8:
        _fail(path, "too short to be a model file")
    (n,) = struct.unpack_from("<Q", buf)
    if not 2 <= n <= MAX_HEADER or 8 + n > len(buf):
        _fail(path, "not a u-moec-tiny model file (bad safetensors header length)")
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        _fail(path, "not a u-moec-tiny model file (header is not JSON)")
    if not isinstance(header, dict):
        _fail(path, "not a u-moec-tiny model file (header is not a JSON object)")
    meta = header.pop("__metadata__", None)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        _fail(path, f"not a u-moec-tiny coding model (safetensors without format {FORMAT!r}; a "
              "training checkpoint is exported with `umc model export`)")
    return header, meta, 8 + n


def describe(path: Path) -> dict:
    """Name, hash, engine, info and size of a model file, reading only its header."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
            (n,) = struct.unpack_from("<Q", head) if len(head) == 8 else (0,)
            if not 2 <= n <= MAX_HEADER:
                _fail(path, "not a u-moec-tiny model file (bad safetensors header length)")
            head += fh.read(n)
    except OSError as exc:
        _fail(path, f"cannot be read ({exc.strerror or exc})")
    _, meta, _ = read_header(head, path)
    try:
        info = json.loads(meta.get("info", "{}"))
    except ValueError:
        info = {}
    return {"name": str(meta.get("name", "")), "hash": str(meta.get("hash", "")),
            "engine": str(meta.get("engine", "")), "info": info if isinstance(info, dict) else {},
            "path": path, "bytes": path.stat().st_size}


def from_bytes(buf: bytes, path: Any = "<bytes>") -> ModelFile:
    header, meta, start = read_header(buf, path)
    try:
        engine = int(meta.get("engine", ""))
    except ValueError:
        _fail(path, f"engine version {meta.get('engine')!r} is not a number")
    if engine > ENGINE_VERSION:
        _fail(path, f"made for coding engine v{engine}; this build has v{ENGINE_VERSION} "
              "(upgrade u-moec-tiny)")
    tensors = {}
    data = memoryview(buf)[start:]
    for name, e in header.items():
        try:
            dtype = np.dtype(_DTYPES[e["dtype"]]).newbyteorder("<")
            shape = tuple(int(s) for s in e["shape"])
            a, b = (int(v) for v in e["data_offsets"])
        except (KeyError, TypeError, ValueError):
            _fail(path, f"tensor {name!r} has a malformed entry")
        count = int(np.prod(shape)) if shape else 1
        if not 0 <= a <= b <= len(data) or b - a != count * dtype.itemsize:
            _fail(path, f"tensor {name!r} does not fit the file (truncated or damaged)")
        tensors[name] = np.frombuffer(data[a:b], dtype=dtype).reshape(shape).astype(
            dtype.newbyteorder("="))
    try:
        config = json.loads(meta["config"])
        info = json.loads(meta.get("info", "{}"))
    except (KeyError, ValueError):
        _fail(path, "its config or info metadata is not JSON")
    if not isinstance(config, dict):
        _fail(path, "its config is not a mapping")
    name, recorded = str(meta.get("name", "")), str(meta.get("hash", ""))
    got = content_hash(config, tensors, engine)
    if got != recorded:
        _fail(path, f"damaged: its content gives hash {got[:12]}, the file records "
              f"{recorded[:12] or 'none'}")
    return ModelFile(name, recorded, config, tensors, info if isinstance(info, dict) else {},
                     engine, Path(path) if not isinstance(path, str) or path != "<bytes>" else None)


def read(path: Path) -> ModelFile:
    path = Path(path)
    try:
        buf = path.read_bytes()
    except OSError as exc:
        _fail(path, f"cannot be read ({exc.strerror or exc})")
    m = from_bytes(buf, path)
    m.path = path
    return m
