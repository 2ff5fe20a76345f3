#!/bin/sh
# HEALTHCHECK probe of the iggy-connectors and iggy-connector-runner images: GET /health on the
# endpoint that IGGY_CONNECTORS_HTTP_ADDRESS configures (host:port or unix:/path), so the probe
# follows the address when it is changed with -e. /health never needs the API key.
# Exit status: 0 healthy, 1 not (curl's own code is folded into 1, as HEALTHCHECK wants).
set -u
address="${IGGY_CONNECTORS_HTTP_ADDRESS:-127.0.0.1:8081}"
scheme=http
insecure=""
case "${IGGY_CONNECTORS_HTTP_TLS_ENABLED:-false}" in
  [Tt][Rr][Uu][Ee]) scheme=https; insecure=--insecure ;; # the probe checks liveness, not the certificate
esac
case "$address" in
  unix:*)
    curl -fsS --max-time 3 $insecure --unix-socket "${address#unix:}" -o /dev/null "$scheme://localhost/health" || exit 1
    exit 0 ;;
esac
port="${address##*:}"
host="${address%:*}"
case "$host" in
  ""|0.0.0.0|"[::]") host=127.0.0.1 ;; # a wildcard bind is reached on loopback
esac
curl -fsS --max-time 3 $insecure -o /dev/null "$scheme://$host:$port/health" || exit 1
