"""u-moec-tiny: a byte-level neural lossless compressor, its trainer and its cockpit."""
__version__ = "0.1.0"


def installed_version() -> str:
    """The installed distribution's version ("unknown" in a checkout never installed): what
    `umc -V` prints and what Dask workers must match."""
    try:
        from importlib.metadata import version
        return version("u-moec-tiny")
    except Exception:
        return "unknown"
