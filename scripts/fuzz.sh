#!/usr/bin/env bash
# Run every fuzz target for a while: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`); the stable toolchain runs it with
# RUSTC_BOOTSTRAP=1. Seeds come from samples/; crashes land in fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(hex_text frame records pcap)
export RUSTC_BOOTSTRAP=1
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  case $t in
    hex_text) cp ../samples/*.hex "corpus/$t/" ;;
    frame) for f in ../samples/*.hex; do python3 -c "import sys;d=bytes.fromhex(open(sys.argv[1]).read().replace(' ','').replace('\n',''));open(sys.argv[2],'wb').write(b'\x00\x00'+d)" "$f" "corpus/$t/$(basename "$f" .hex)"; done ;;
  esac
  echo "== $t for ${secs}s"
  cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=1024 -max_len=65536 2>&1 | grep -E "^#[0-9]+.*(DONE|pulse)|Done|SUMMARY|ERROR|crash" | tail -3
done
