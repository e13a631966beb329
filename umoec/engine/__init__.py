"""The exact coding engine: coding models as integers, run with exact integer arithmetic.

Encoder and decoder compute bit-identical probabilities on any machine (fixed.py says how), so
a .umc file decodes anywhere its model is. Imports numpy only; torch is needed to export a
model from a training checkpoint, never to code.
"""
ENGINE_VERSION = 1
