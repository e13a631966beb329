"""The Architecture tab: a diagram of the sidebar's model, size cards, per-block table."""
