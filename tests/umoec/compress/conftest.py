"""The compressor tests use the session-wide `tiny_ckpt` / `tiny_model` of tests/conftest.py."""
