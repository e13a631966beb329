'use strict';
// The cockpit's plotly.js: the core (scatter) and the trace types gui/figures/ draws, nothing
// else: ~1.6 MB to evaluate at page load instead of the full bundle's 4.8 MB
// (tests/gui/test_plotly_bundle.py keeps this list and gui/figures/ in step).
var Plotly = require('plotly.js/lib/core');

Plotly.register([
    require('plotly.js/lib/bar'),
    require('plotly.js/lib/box'),
    require('plotly.js/lib/heatmap'),
    require('plotly.js/lib/scattergl'),
]);

// dcc.Graph uses window.Plotly when it is there instead of loading plotly.min.js itself.
window.Plotly = Plotly;
