"""The Evaluation tab: evaluate a coding model or checkpoint on data, against the reference compressors."""
