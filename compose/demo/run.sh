#!/usr/bin/env bash
# The `make run` demo: the dev broker plus iggy-connectors running a random source and a stdout
# sink (each in its own runner process). Run from the repository root after `make build`.
# IGGY_PROTOCOL=0.8|0.9 makes the broker and the connectors speak that Iggy protocol only
# (`make run IGGY_PROTOCOL=0.9`); unset, the broker speaks both and the connectors detect one.
set -euo pipefail
cd "$(dirname "$0")/../.."

BROKER_ADDR="${IGGY_TCP_ADDRESS:-127.0.0.1:8090}"
for bin in bin/iggy-dev-server bin/iggy-connectors bin/iggy-connector-runner; do
  [ -x "$bin" ] || { echo "missing $bin: run 'make build' first" >&2; exit 1; }
done

PROTOCOL="${IGGY_PROTOCOL:-}"
case "$PROTOCOL" in
  ""|auto) PROTOCOL=auto; BROKER_PROTOCOL="" ;;
  0.8|0.9) BROKER_PROTOCOL="$PROTOCOL" ;;
  *) echo "IGGY_PROTOCOL=$PROTOCOL: want 0.8, 0.9 or auto" >&2; exit 2 ;;
esac

IGGY_TCP_ADDRESS="$BROKER_ADDR" IGGY_DEV_STREAMS="demo_stream:demo_topic" IGGY_DEV_PROTOCOL="$BROKER_PROTOCOL" bin/iggy-dev-server &
broker=$!
trap 'kill "$broker" 2>/dev/null; wait "$broker" 2>/dev/null || true' EXIT

# Wait for the broker's port.
for _ in $(seq 1 50); do
  (exec 3<>"/dev/tcp/${BROKER_ADDR%:*}/${BROKER_ADDR#*:}") 2>/dev/null && break
  sleep 0.1
done

sed "s/PROTO/$PROTOCOL/" <<'TIP'
------------------------------------------------------------------------------------------
iggy-connectors demo: random source -> demo_stream/demo_topic -> stdout sink (Iggy protocol: PROTO).
In another terminal:
  curl -s localhost:8081/stats | jq .
  curl -s localhost:8081/metrics
  curl -s localhost:8081/sinks | jq .
  curl -s localhost:8081/sources/random/configs/active | jq .
  curl -s -X POST localhost:8081/sinks/stdout/restart -i
Ctrl-C drains the runners (sources first, then sinks) and stops.
Console (the overview, each connector's page, live tap and logs; docs/console.md):
  http://localhost:8081/ui/
------------------------------------------------------------------------------------------
TIP

IGGY_CONNECTORS_IGGY_PROTOCOL="$PROTOCOL" \
IGGY_CONNECTORS_CONFIG_PATH=compose/demo/config.toml \
IGGY_CONNECTORS_IGGY_ADDRESS="$BROKER_ADDR" \
  bin/iggy-connectors
