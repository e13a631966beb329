"""Byte datasets: building them (prepare), reading batches (dataset), global features."""
from .dataset import IGNORE, ByteDataset
from .features import document_features
from .corpus import DataError, prepare

__all__ = ["IGNORE", "ByteDataset", "DataError", "document_features", "prepare"]
