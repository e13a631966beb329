"""Figure builders of the cockpit, one module per tab: pure functions from DataFrames (columns as
umoec/metrics/read.py returns them), dicts or view-models to Plotly figures. No Dash, no I/O: callbacks read
the data (umoec/metrics/read.py, gui/services/compare.py, gui/services/forge.py) and pass it in.

- `base`: the "umoec" plotly template (registered when `base` is imported, which every figure
  module does), `empty_fig`, the palettes, the dashed reference line, the dcc.Graph config.
- `series`: long series made cheap to draw (EMA, MinMaxLTTB downsampling, zoom-aware point
  picking, relayout parsing); numpy only.
- `training`, `routing`, `mod`, `activations` (distribution, heatmap, PCA), `architecture`,
  `growth`, `compression` (comparison and evaluation history), `compare`: the tabs' figures.

Statistics the figures plot but do not own (Gini, max/min load) live in umoec/metrics/balance.py.
"""
