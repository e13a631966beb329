"""Byte datasets: building them (prepare), reading batches (dataset), global features."""
from .corpus import DataError, prepare
from .dataset import IGNORE, ByteDataset, DatasetInfo
from .features import document_features

__all__ = ["IGNORE", "ByteDataset", "DataError", "DatasetInfo", "document_features", "prepare"]
