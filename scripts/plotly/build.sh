#!/usr/bin/env bash
# Rebuild gui/assets/05_plotly.min.js, the cockpit's partial plotly.js bundle (entry.js), from
# npm: the plotly.js version that the installed Python plotly package ships (the figures' schema).
# Needs node and npm; run it again after upgrading plotly, then run tests/gui/test_plotly_bundle.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
version="$("$python" -c 'from plotly.offline import get_plotlyjs_version as v; print(v())')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/entry.js" "$work/"
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent "plotly.js@$version" esbuild@0.25 buffer@6
banner="/* plotly.js $version (MIT licence, https://github.com/plotly/plotly.js), partial bundle: core, bar, box, heatmap, scattergl; built by scripts/plotly/build.sh */"
npx esbuild entry.js --bundle --minify --format=iife --target=es2017 --legal-comments=none \
    --define:process.env.NODE_ENV='"production"' --define:global=window \
    --banner:js="$banner" --outfile=bundle.js
cp bundle.js "$root/gui/assets/05_plotly.min.js"
echo "gui/assets/05_plotly.min.js: plotly.js $version, $(wc -c < bundle.js) bytes"
