"""The Brain tab: hidden states of a block on two principal components."""
