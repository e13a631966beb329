"""Dash pieces that several pages share: the checkpoint and model pickers, a job's status line
and progress bar, the analysis tabs' step sliders and alerts, the charts' zoom events, and the
hidden-tab guard (visible_only)."""
