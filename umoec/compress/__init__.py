"""The neural compressor: a trained checkpoint driving the codec (profiles, API, evaluation)."""
