"""The u-moec-tiny cockpit (Dash). Start it with `python gui/app.py`."""
