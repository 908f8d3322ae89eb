#!/usr/bin/env bash
# Run every fuzz target for a while: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`); the stable toolchain runs it with
# RUSTC_BOOTSTRAP=1. Seeds come from samples/; crashes land in fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(hex_text frame records pcap encode_json tls defs)
export RUSTC_BOOTSTRAP=1
# ASan holds 256 MB of freed memory in quarantine by default, which the RSS
# limit below counted once the corpus grew (the frame target's 3,408 inputs
# loaded at 546 MB, 219 MB with 64 MB of quarantine, 2026-12-06): the limit
# is about kwire's own memory.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  case $t in
    hex_text) cp ../samples/*.hex "corpus/$t/" ;;
    encode_json) for f in ../samples/*request.hex; do ../target/release/kwire decode --json "$f" > "corpus/$t/$(basename "$f" .hex).json" 2>/dev/null || true; done ;;
    pcap) cp ../samples/captures/*.pcap* ../samples/captures/tls/*.pcap* "corpus/$t/" 2>/dev/null || true ;;
    # Definitions as kwire writes them back (never files from ../shared, which stay outside the repository).
    defs) printf '{"apiKey":9000,"type":"request","name":"FuzzRequest","validVersions":"0-1","flexibleVersions":"1+","fields":[{"name":"A","type":"[]S","versions":"0+"}],"commonStructs":[{"name":"S","versions":"0+","fields":[{"name":"B","type":"string","versions":"0+"}]}]}' > "corpus/$t/seed.json" ;;
    tls) printf '\000\000' > "corpus/$t/seed" ;;
    frame) for f in ../samples/*.hex; do python3 -c "import sys;d=bytes.fromhex(open(sys.argv[1]).read().replace(' ','').replace('\n',''));open(sys.argv[2],'wb').write(b'\x00\x00'+d)" "$f" "corpus/$t/$(basename "$f" .hex)"; done ;;
  esac
  # A target that does not build says so (the run's filter below would hide it).
  if ! build=$(cargo fuzz build "$t" 2>&1); then
    echo "$build" | grep -E "^error" -A8 | head -40
    echo "fuzz.sh: the $t target does not build" >&2
    exit 1
  fi
  echo "== $t for ${secs}s"
  # The memory limits hold the budgets to account: RSS (ASan's shadow and
  # quarantine included) and any single allocation.
  cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=512 -malloc_limit_mb=64 -max_len=65536 -print_final_stats=1 2>&1 \
    | grep -E "^#[0-9]+.*(DONE|pulse)|Done|SUMMARY|ERROR|crash|stat::(number_of_executed_units|peak_rss_mb)" | tail -5
done
