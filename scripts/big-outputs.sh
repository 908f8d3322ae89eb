#!/usr/bin/env bash
# The benchmark inputs through every view, held to the bytes they printed
# when snapshots/big-outputs.sha256 was last written: the 100 MB mixed
# capture, the 22 MB Fetch frame of 400,000 records and the 8.4 MB Metadata
# frame of 200,000 partitions, alone and in captures (issue #36: a redesign
# of the representation must not move a byte of any output). These run to
# gigabytes of text, so each is hashed as it streams, never held; the small
# shipped inputs are tests/outputs_unchanged.rs's.
#
#   scripts/big-outputs.sh                        compare with the list
#   KWIRE_UPDATE_SNAPSHOTS=1 scripts/big-outputs.sh   rewrite the list
#   KWIRE_BIN=path scripts/big-outputs.sh         another build (an older
#                                                 commit's) against the list
#
# The inputs are written by examples/make_bench_inputs, which makes the same
# bytes on every run. About a minute on 2 cores after the release build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
list=snapshots/big-outputs.sha256

target=${CARGO_TARGET_DIR:-$root/target}
if [ -z "${KWIRE_BIN:-}" ]; then
  cargo build --release -q --bin kwire --example make_bench_inputs
  KWIRE_BIN=$target/release/kwire
else
  cargo build --release -q --example make_bench_inputs
  # The commands run in the inputs' folder.
  case $KWIRE_BIN in /*) ;; *) KWIRE_BIN=$root/$KWIRE_BIN ;; esac
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/kwire-big-outputs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$target/release/examples/make_bench_inputs" "$dir" 100 2>/dev/null

# Length and SHA-256 (first 24 digits) of stdin, read as it streams.
measure() {
  python3 -c '
import hashlib, sys
h, n = hashlib.sha256(), 0
while chunk := sys.stdin.buffer.read(1 << 20):
    h.update(chunk)
    n += len(chunk)
print(n, h.hexdigest()[:24])'
}

# One line a command: exit status, stdout length and hash, stderr hash
# (and the written file's length and hash), then the command.
run() {
  local writes=()
  if [ "$1" = "--writes" ]; then writes=(--out out.html); shift; rm -f "$dir/out.html"; fi
  local measured line
  # The exit status comes out of the pipeline on the line after its measure.
  # Run in the inputs' folder, named relatively: a report quotes its input's name.
  measured=$(
    cd "$dir" || exit
    COLUMNS=120 NO_COLOR=1 env -u KWIRE_DEFS -u CLICOLOR_FORCE "$KWIRE_BIN" "$@" "${writes[@]}" 2>"$dir/stderr" | measure
    echo "${PIPESTATUS[0]}"
  )
  line="$(tail -1 <<<"$measured") $(head -1 <<<"$measured") $(measure <"$dir/stderr" | cut -d' ' -f2)"
  if [ ${#writes[@]} -gt 0 ]; then line="$line $(measure <"$dir/out.html")"; fi
  echo "$line | $*"
}

commands() {
  local views=(
    "capture --list" "capture" "capture --format json" "capture --format tree-json"
    "capture --format grid" "stats" "stats --format json" "inventory"
    "inventory --format json" "check" "check --format json" "records" "records --format json"
  )
  local pcap view format
  for pcap in mixed.pcap fetch-400k.pcap metadata-200k.pcap; do
    for view in "${views[@]}"; do
      # shellcheck disable=SC2086 # a view is its words
      run $view "$pcap"
    done
    run --writes report "$pcap"
  done
  local fetch=(--binary fetch-400k.bin --response --api Fetch --version 12)
  local metadata=(--binary metadata-200k.bin --response --api Metadata --version 12)
  for frame in fetch metadata; do
    local -n args=$frame
    for format in "--format tree" "--format json" "--format tree-json" "--format grid" "--explain"; do
      # shellcheck disable=SC2086
      run decode "${args[@]}" $format
    done
    run check "${args[@]}"
  done
  # A response given no direction: taken for one by trying every schema.
  run decode --binary metadata-200k.bin
}

lines=$(commands)
if [ "${KWIRE_UPDATE_SNAPSHOTS:-}" = 1 ]; then
  printf '%s\n' "$lines" >"$list"
  echo "big-outputs: wrote $list ($(wc -l <"$list") commands)"
  exit 0
fi
if ! diff <(cat "$list") <(printf '%s\n' "$lines") >"$dir/diff"; then
  echo "big-outputs: outputs changed from $list (rerun with KWIRE_UPDATE_SNAPSHOTS=1 if the change is meant):" >&2
  cat "$dir/diff" >&2
  exit 1
fi
echo "big-outputs: $(printf '%s\n' "$lines" | wc -l) outputs the bytes they were"
