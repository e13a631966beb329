"""The MoD tab: mixture-of-depths: fraction processed per block, now and over training."""
