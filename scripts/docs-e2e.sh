#!/usr/bin/env bash
# End-to-end check of the docs site in headless Chromium: build the site,
# screenshot two pages, then check the DOM (one grid cell per byte, hovering a
# byte selects its tree node and the reverse, no console errors, no network).
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
"$KWIRE_BIN" docs --out "$site"

pages=(api/WriteShareGroupState-v0.html api/Produce.html)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
for p in "${pages[@]}"; do
  shot="$out/$(basename "$p" .html).png"
  "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --no-first-run --user-data-dir="$profile" --hide-scrollbars --window-size=1400,1600 \
    --screenshot="$shot" "file://$site/$p" >/dev/null 2>&1
  [ -s "$shot" ] || { echo "docs-e2e: no screenshot of $p" >&2; exit 1; }
  echo "screenshot: $shot"
done

# playwright-core drives the installed Chromium (it downloads no browser).
if [ ! -d scripts/e2e/node_modules/playwright-core ]; then
  (cd scripts/e2e && npm ci --no-audit --no-fund --silent)
fi
CHROMIUM="$chromium" node scripts/e2e/check-pages.mjs "$site" "${pages[@]}"
