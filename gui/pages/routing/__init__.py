"""The Routing tab: expert load at a step and over training, balance, drill-down."""
