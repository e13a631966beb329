"""Sidebar block: save the form as a named preset (it then appears in the tier/preset
dropdown), delete one, and import/export the form as YAML or JSON."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from . import ids


def layout() -> html.Div:
    return html.Div([
        dbc.InputGroup([
            dbc.Input(id=ids.PRESET_NAME, placeholder="preset name", size="sm"),
            dbc.Button("Save preset", id=ids.PRESET_SAVE_BTN, color="secondary", size="sm",
                       outline=True),
            dbc.Button("Delete", id=ids.PRESET_DELETE_BTN, color="secondary", size="sm",
                       outline=True, title="delete the saved preset of this name"),
        ], size="sm", class_name="mb-1"),
        html.Div([
            dcc.Upload(dbc.Button("Import YAML/JSON", color="link", size="sm", class_name="px-0"),
                       id=ids.CONFIG_IMPORT, accept=".yaml,.yml,.json", max_size=1 << 20,
                       multiple=False, className="me-3"),
            dbc.Button("Export YAML", id=ids.CONFIG_EXPORT_YAML, color="link", size="sm",
                       class_name="px-0 me-3"),
            dbc.Button("Export JSON", id=ids.CONFIG_EXPORT_JSON, color="link", size="sm",
                       class_name="px-0"),
            dcc.Download(id=ids.CONFIG_EXPORT),
        ], className="d-flex align-items-center"),
        html.Div(id=ids.PRESET_STATUS, className="small", role="status"),
    ], className="mb-2")
