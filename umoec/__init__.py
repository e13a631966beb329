"""u-moec-tiny: a byte-level neural lossless compressor, its trainer and its cockpit."""
__version__ = "0.1.0"
