"""The Compare tab: 2-8 runs overlaid, re-aggregated on zoom, a diff table and CSV."""
