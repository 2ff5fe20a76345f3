// Package fleet is the attach mode's view of runners deployed on their own (docs/architecture.md, decision 21):
// it finds them, polls their endpoints and keeps the last snapshot, so the supervisor answers its
// merged API without waiting on any runner.
//
// Files: discover.go (the endpoints of fleet.runners and fleet.dns: SRV names, or A/AAAA names
// with a port, resolved on every refresh through a resolver that tests point at their own DNS
// server; every endpoint without a scheme of its own takes fleet.scheme), transport.go (how
// runners are called: TLS verified against fleet.ca_file and fleet.server_name, and no redirect
// ever followed, so the runner key goes to the runner and nowhere else), poll.go (one runner's /health, /stats, /config and metrics read within the per-runner
// timeout, and the calls forwarded to it), fleet.go (the refresh loop: every replica by endpoint,
// unreachable ones kept with their last figures, dropped a grace period after they left
// discovery; Snapshot is what the API reads), stream.go (Open: a long GET on one runner, a tap
// or a followed log, for the supervisor to merge over the replicas).
package fleet
