"""Entropy models: what predicts the next byte of each stream, apart from the coders that use
the predictions (umoec/codec/). protocol.py is the contract (Predictor, BOS); order2.py a
classical model; match.py the match model wrapped around any predictor; torch_step.py a torch
step-form model as a Predictor; numerics.py the exact logarithm they share. The coding engine's
predictor is umoec/engine/predictor.py."""
