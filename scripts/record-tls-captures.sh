#!/usr/bin/env bash
# Record a real client over TLS into samples/captures/tls/: kafka-python (its
# SSLContext writes the session keys to a key log) through stunnel, which
# terminates TLS in front of a tansu broker, recorded with tcpdump on
# loopback on both sides of stunnel. For each of six cipher suites (TLS 1.2:
# ECDHE-RSA with AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305; TLS 1.3:
# TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256,
# forced by stunnel's `ciphers` and `ciphersuites`):
#   NAME.pcap          the TLS side (client ↔ stunnel, port 19093)
#   NAME.keylog        the client's key log
#   NAME-dsb.pcapng    NAME.pcap with the key log in a Decryption Secrets Block
#                      (editcap --inject-secrets)
#   NAME-clear.pcap    the same traffic in clear (stunnel ↔ tansu, port 19092)
# and tls13-keyupdate.*: openssl s_client sending Kafka requests (ApiVersions,
# then Metadata) with a KeyUpdate between them ("K": both sides update).
# Needs: tansu 0.6.0 (see record-captures.sh), stunnel4, tcpdump, editcap
# (tshark's package), openssl, python3 with kafka-python. CI only replays the
# committed files.
set -euo pipefail
cd "$(dirname "$0")/.."
out=samples/captures/tls
mkdir -p "$out"
tls_port=19093
port=19092
tansu=${TANSU:-tansu}
work=$(mktemp -d)
trap 'stop; rm -rf "$work"' EXIT
pids=()
stop() { for p in "${pids[@]:-}"; do [ -n "$p" ] && { kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; }; done; pids=(); }

openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 3650 \
  -keyout "$work/server.key" -out "$work/server.pem" >/dev/null 2>&1

wait_port() { for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.2; done; echo "nothing on port $1" >&2; exit 1; }

start() { # stunnel protocol options, one per line
  "$tansu" broker --listener-url "tcp://127.0.0.1:$port" --advertised-listener-url "tcp://localhost:$tls_port" \
    --storage-engine "memory://tansu/" >"$work/tansu.log" 2>&1 &
  pids+=($!)
  wait_port "$port"
  { printf 'foreground = yes\npid =\ndebug = 3\n[kafka]\naccept = 127.0.0.1:%s\nconnect = 127.0.0.1:%s\ncert = %s\nkey = %s\n' \
      "$tls_port" "$port" "$work/server.pem" "$work/server.key"; printf '%s\n' "$@"; } > "$work/stunnel.conf"
  stunnel "$work/stunnel.conf" >"$work/stunnel.log" 2>&1 &
  pids+=($!)
  wait_port "$tls_port"
}

record() { # name command...: both sides of stunnel while the command runs
  local name=$1; shift
  rm -f "$out/$name".*  "$out/$name"-*
  tcpdump -i lo -U -s 0 -w "$out/$name.pcap" "tcp port $tls_port" >/dev/null 2>&1 &
  local tls_dump=$!
  tcpdump -i lo -U -s 0 -w "$out/$name-clear.pcap" "tcp port $port" >/dev/null 2>&1 &
  local clear_dump=$!
  sleep 1
  "$@" || echo "$name: client exited $?"
  sleep 1
  kill "$tls_dump" "$clear_dump"; wait "$tls_dump" "$clear_dump" 2>/dev/null || true
  stop
  editcap --inject-secrets "tls,$out/$name.keylog" "$out/$name.pcap" "$out/$name-dsb.pcapng"
  echo "$name: $(stat -c %s "$out/$name.pcap") bytes TLS, $(stat -c %s "$out/$name-clear.pcap") clear, $(wc -l < "$out/$name.keylog") key log lines"
}

suite() { # name stunnel-options...
  local name=$1; shift
  start "$@"
  record "$name" python3 scripts/captures/kafka_python_tls_client.py "$tls_port" "$out/$name.keylog"
}

suite tls12-aes128gcm "sslVersionMin = TLSv1.2" "sslVersionMax = TLSv1.2" "ciphers = ECDHE-RSA-AES128-GCM-SHA256"
suite tls12-aes256gcm "sslVersionMin = TLSv1.2" "sslVersionMax = TLSv1.2" "ciphers = ECDHE-RSA-AES256-GCM-SHA384"
suite tls12-chacha20 "sslVersionMin = TLSv1.2" "sslVersionMax = TLSv1.2" "ciphers = ECDHE-RSA-CHACHA20-POLY1305"
suite tls13-aes128gcm "sslVersionMin = TLSv1.3" "ciphersuites = TLS_AES_128_GCM_SHA256"
suite tls13-aes256gcm "sslVersionMin = TLSv1.3" "ciphersuites = TLS_AES_256_GCM_SHA384"
suite tls13-chacha20 "sslVersionMin = TLSv1.3" "ciphersuites = TLS_CHACHA20_POLY1305_SHA256"

# A KeyUpdate in a real TLS 1.3 session: s_client sends an ApiVersions
# request, then "K" (KeyUpdate, update requested: the server updates too),
# then a Metadata request, each on its own read of standard input.
keyupdate_client() {
  { sleep 1; python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("0000001e001200030000000100086b776972652d6b7500066b7769726504302e3100"))'
    sleep 1; printf 'K\n'
    sleep 1; python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("000000170003000c0000000200086b776972652d6b750000010000"))'
    sleep 2; } | timeout 20 openssl s_client -connect "127.0.0.1:$tls_port" -tls1_3 -keylogfile "$1" >/dev/null 2>&1 || true
}
start "sslVersionMin = TLSv1.3" "ciphersuites = TLS_AES_128_GCM_SHA256"
record tls13-keyupdate keyupdate_client "$out/tls13-keyupdate.keylog"
