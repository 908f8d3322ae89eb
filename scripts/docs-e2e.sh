#!/usr/bin/env bash
# End-to-end check of the docs site in headless Chromium: build the site,
# screenshot its pages, then check the DOM (one grid cell per byte, hovering a
# byte selects its tree node and the reverse, legends name only the regions
# shown, anchors resolve, tree lines lead to their rows, the search finds and
# leads to fields, no console errors, no network).
# With upstream definitions (KWIRE_E2E_DEFS, default ../shared/kafka-defs/4.0
# when present) a second site is built from them alone and its Produce page
# checked: 4.0's versions and the definitions' descriptions.
# Screenshots are left in $E2E_OUT (default: a temporary folder, printed).
#   KWIRE_BIN  the kwire binary (default: cargo build --release)
#   CHROMIUM   the browser (default: chromium on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${E2E_OUT:-$(mktemp -d)}
mkdir -p "$out"
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  echo "docs-e2e: no chromium (apt-get install -y chromium)" >&2
  exit 3
fi
if [ -z "${KWIRE_BIN:-}" ]; then
  cargo build --release --quiet
  KWIRE_BIN="${CARGO_TARGET_DIR:-$root/target}/release/kwire"
fi

site="$out/site"
rm -rf "$site"
env -u KWIRE_DEFS "$KWIRE_BIN" docs --out "$site"

defs=${KWIRE_E2E_DEFS:-$root/../shared/kafka-defs/4.0}
defs_site=""
if [ -d "$defs" ]; then
  defs_site="$out/site-defs"
  rm -rf "$defs_site"
  "$KWIRE_BIN" --defs "$defs" docs --out "$defs_site"
else
  echo "docs-e2e: no definitions at $defs; the --defs site is not checked"
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# Whole-window screenshots as a reader first sees each page.
shoot() { # NAME URL
  "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --no-first-run --user-data-dir="$profile" --hide-scrollbars --window-size=1400,1600 \
    --screenshot="$out/$1.png" "$2" >/dev/null 2>&1
  [ -s "$out/$1.png" ] || { echo "docs-e2e: no screenshot of $2" >&2; exit 1; }
  echo "screenshot: $out/$1.png"
}
shoot WriteShareGroupState-v0 "file://$site/api/WriteShareGroupState-v0.html"
shoot Produce "file://$site/api/Produce.html"
shoot record-batch "file://$site/record-batch.html"
shoot errors "file://$site/errors.html"
shoot search "file://$site/search.html?q=produce%20records"
if [ -n "$defs_site" ]; then
  shoot defs-Produce "file://$defs_site/api/Produce.html"
fi

# playwright-core drives the installed Chromium (it downloads no browser).
if [ ! -d scripts/e2e/node_modules/playwright-core ]; then
  (cd scripts/e2e && npm ci --no-audit --no-fund --silent)
fi
CHROMIUM="$chromium" SHOTS="$out" DEFS_SITE="$defs_site" node scripts/e2e/check-pages.mjs "$site" \
  api/WriteShareGroupState-v0.html api/Produce.html record-batch.html errors.html
