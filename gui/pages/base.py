"""What a tab of the cockpit is: its id, label, pane layout and callbacks (gui/pages/*/); and the
one-line outcome messages its callbacks show."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dash import html

Register = Callable[[Any, Any], None]      # (the Dash app, the AppContext) -> None


@dataclass(frozen=True)
class Page:
    tab_id: str                   # ids.TAB_* (a spec string, unchanged)
    label: str                    # the tab bar's text
    layout: Callable[[], Any]     # the pane's components, built when the tab is first shown
    register: Register            # every callback of the page


def registers(*parts: Register) -> Register:
    """One register function for a page or part whose callbacks live in several modules."""
    def register(app, ctx) -> None:
        for part in parts:
            part(app, ctx)
    return register


def ok(text: Any) -> html.Span:
    return html.Span(text, className="text-success")


def bad(text: Any) -> html.Span:
    return html.Span(text, className="text-danger")
