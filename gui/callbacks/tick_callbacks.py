"""The refresh tick, per tab: only the visible tab's callbacks run on each tick.

Every tab's refresh-driven callbacks listen to their tab's store `ids.tab_tick(tab)` instead of the
interval itself. This clientside callback (no server request) copies the interval's count into the
visible tab's store only; a tab that becomes visible refreshes through its own `active_tab` input.
Without it, each tick sent one request per tab's callback, hidden or not (~15 per tick), and on a
slow machine at a fast refresh the answers came back stale faster than they were applied: the
sidebar's status never showed.
"""
from __future__ import annotations

import json

from dash import Input, Output

from .. import ids


def register(app) -> None:
    app.clientside_callback(
        """function(n, active) {
            const tabs = %s;
            const none = window.dash_clientside.no_update;
            return tabs.map(t => (t === active ? (n || 0) : none));
        }""" % json.dumps(list(ids.TAB_IDS)),
        [Output(ids.tab_tick(t), "data") for t in ids.TAB_IDS],
        Input(ids.REFRESH, "n_intervals"), Input(ids.TABS, "active_tab"))
