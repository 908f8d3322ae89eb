#!/usr/bin/env bash
# The self-signed certificate the TLS tests use (tests/data/tls): a P-256 key,
# CN and subjectAltName localhost / 127.0.0.1, valid for 100 years, not a CA
# (rustls refuses a CA certificate as a server's own).
set -euo pipefail
cd "$(dirname "$0")/../tests/data/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout key.pem -out cert.pem -subj /CN=localhost -days 36500 \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
  -addext basicConstraints=critical,CA:FALSE
