package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httplimit"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/state"
)

// Activation with a probe (docs/runtime-changes.md): PUT .../configs/active with a probe window
// ({"version": N, "probe": "30s"} or ?probe=30s; default [connectors] activation_probe, "0" =
// upstream's behaviour, which only records the active version) records version N as active,
// restarts the connector on it and watches it for the window. The new version must reach running
// (paused when an operator paused the connector; standby for a waiting source replica) and stay
// there: a runner exit, a crash, an error status, not running at the end, or more failed messages
// than the max error rate ({"max_error_rate": 0.05} or ?max_error_rate=, default [connectors]
// activation_max_error_rate, 0 = not checked) put the previous version back: it is recorded as
// active again, the connector restarted on it, a sink's consumer-group offsets (or a source's
// state) put back to where the previous version left them, so the messages the new version took
// are delivered again (at least once), and the answer is 409 naming the reason and the version
// kept. The new version stays stored. The rollback is logged, counted
// (iggy_connector_config_rollbacks_total) and shown by GET .../configs/active.

// activationRequest is what PUT .../configs/active may carry besides the version.
type activationRequest struct {
	probe        time.Duration
	maxErrorRate float64
}

// activationOf reads the probe window and max error rate of a PUT .../configs/active: the body's
// "probe" (a duration such as "30s") and "max_error_rate" (0 to 1), else the query's, else the
// [connectors] defaults. A bad value is an error naming it.
func (s *Supervisor) activationOf(r *http.Request, body []byte) (activationRequest, error) {
	a := activationRequest{probe: s.runtime.Connectors.ActivationProbe, maxErrorRate: s.runtime.Connectors.ActivationMaxErrorRate}
	var fields struct {
		Probe        json.RawMessage `json:"probe"`
		MaxErrorRate json.RawMessage `json:"max_error_rate"`
	}
	_ = json.Unmarshal(body, &fields) // the shape was checked by the caller
	q := r.URL.Query()
	probe, rate := q.Get("probe"), q.Get("max_error_rate")
	probeInQuery, rateInQuery := true, true
	if len(fields.Probe) > 0 && string(fields.Probe) != "null" {
		probeInQuery = false
		if err := json.Unmarshal(fields.Probe, &probe); err != nil {
			return a, fmt.Errorf("probe: expected a duration string such as \"30s\", got %s", fields.Probe)
		}
	}
	if len(fields.MaxErrorRate) > 0 && string(fields.MaxErrorRate) != "null" {
		rate, rateInQuery = string(fields.MaxErrorRate), false
	}
	if probe != "" {
		d, err := config.ParseDuration(probe)
		if err != nil || d < 0 {
			return a, queryOr(probeInQuery, fmt.Errorf("probe: invalid duration %q (want e.g. \"30s\"; \"0\" for none)", probe))
		}
		a.probe = d
	}
	if rate != "" {
		v, err := strconv.ParseFloat(strings.TrimSpace(rate), 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return a, queryOr(rateInQuery, fmt.Errorf("max_error_rate: %s is not a share between 0 and 1 (0.05 is 5%% of the messages; 0 switches the check off)", rate))
		}
		a.maxErrorRate = v
	}
	return a, nil
}

// queryError is a bad activation value given in the query string (400, as axum's query
// extractor answers), not in the body (422).
type queryError struct{ error }

func queryOr(inQuery bool, err error) error {
	if inQuery {
		return queryError{err}
	}
	return err
}

// writeActivationError answers a bad probe or max_error_rate as the framework answers a bad query
// string or body.
func writeActivationError(w http.ResponseWriter, err error) {
	var q queryError
	if errors.As(err, &q) {
		writeText(w, http.StatusBadRequest, "Failed to deserialize query string: "+err.Error())
		return
	}
	writeText(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error())
}

// rollbackInfo is the last rolled-back activation of a connector, shown by GET
// .../configs/active while the connector runs the version that was kept.
type rollbackInfo struct {
	From   uint64 // the version rolled back
	Kept   uint64 // the version put back
	Reason string
	At     time.Time
}

// withRollback adds the last rollback to a GET .../configs/active answer (additive members).
func (m *managed) withRollback(obj []byte) []byte {
	m.mu.Lock()
	rb := m.rollback
	m.mu.Unlock()
	if rb == nil || len(obj) < 2 || obj[len(obj)-1] != '}' {
		return obj
	}
	extra, _ := json.Marshal(struct {
		From   uint64 `json:"rolled_back_from"`
		Reason string `json:"rollback_reason"`
		At     string `json:"rolled_back_at"`
	}{rb.From, rb.Reason, rb.At.UTC().Format(time.RFC3339Nano)})
	out := append(obj[:len(obj)-1:len(obj)-1], ',')
	return append(out, extra[1:]...)
}

// forgetRollbackLocked drops the rollback record once another version than the kept one is
// launched. Called with m.mu held, by launch.
func (m *managed) forgetRollbackLocked(version uint64) {
	if m.rollback != nil && m.rollback.Kept != version {
		m.rollback = nil
	}
}

// activateWithProbe runs the probed activation of target for the connector of the path's key and
// answers it: 204 when the new version held through the window, 409 when it was rolled back.
func (s *Supervisor) activateWithProbe(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind, target config.Connector, a activationRequest) {
	m, ok := s.running(w, r, kind)
	if !ok {
		return
	}
	// The answer waits for the window, on top of a drain and two starts (new, maybe old).
	httplimit.ExtendWrite(w, s.runtime.HTTP.Limits.WriteTimeout, 2*s.slowBudget()+a.probe)
	m.ops.Lock()
	defer m.ops.Unlock()
	if s.closing.Load() {
		writeAPIError(w, shuttingDown())
		return
	}
	sn := m.snapshot()
	m.mu.Lock()
	stopped := m.target == targetStopped
	m.mu.Unlock()
	var refuse string
	switch {
	case sn.placeholder:
		refuse = "its config does not load, so there is no version to go back to; activate without a probe and restart it"
	case !sn.cfg.Enabled:
		refuse = "it is disabled (enabled = false in its config)"
	case stopped:
		refuse = "it is stopped, so the new version cannot be watched; start it first, or activate without a probe"
	}
	if refuse != "" {
		writeAPIError(w, conflict(m, "activate a version with a probe of", refuse))
		return
	}
	if target.Version == sn.cfg.Version {
		if err := s.provider.SetActive(r.Context(), kind, m.key, target.Version); err != nil {
			writeAPIError(w, providerError(kind, err))
			return
		}
		w.WriteHeader(http.StatusNoContent) // it runs already: nothing to probe
		return
	}
	path, err := s.prepare(target)
	if err != nil {
		writeAPIError(w, invalidConfiguration(configProblem(err)))
		return
	}
	prev, prevPath := sn.cfg, sn.path
	if err := s.provider.SetActive(r.Context(), kind, m.key, target.Version); err != nil {
		writeAPIError(w, providerError(kind, err))
		return
	}
	s.log.Info("activating a version with a probe", "connector", m.label(), "version", target.Version,
		"previous", prev.Version, "probe", a.probe, "max_error_rate", a.maxErrorRate)
	m.stopLoop()
	// Where the previous version left off, to put back on a rollback.
	saved, saveErr := s.savePosition(r.Context(), prev)
	if saveErr != nil {
		s.log.Warn("cannot read where the previous version left off; a rollback will not rewind", "connector", m.label(), "error", saveErr)
	}
	before := m.page.Stats(false)
	reason := s.probe(m, target, path, a, before)
	if reason == "" {
		s.log.Info("activated version held through its probe", "connector", m.label(), "version", target.Version, "probe", a.probe)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	notes := s.rollback(r.Context(), m, prev, prevPath, target.Version, reason, saved, saveErr)
	writeAPIError(w, &apiError{status: http.StatusConflict, Code: "activation_rolled_back",
		Reason: fmt.Sprintf("Version %d of %s %s was rolled back: %s; version %d is active and running again%s",
			target.Version, kind, m.key, reason, prev.Version, notes)})
}

// probe starts the connector on target and watches it for the window: "" when it held, else why
// not.
func (s *Supervisor) probe(m *managed, target config.Connector, path string, a activationRequest, before metrics.ConnectorStats) string {
	if err := <-m.launch(target, path); err != nil {
		if errors.Is(err, errShuttingDown) {
			return "the supervisor is shutting down"
		}
		return "it did not start: " + err.Error()
	}
	startRestarts := m.snapshot().restarts
	deadline := time.Now().Add(a.probe)
	tick := time.NewTicker(min(s.env.HealthInterval, 100*time.Millisecond))
	defer tick.Stop()
	for {
		sn := m.snapshot()
		status := sn.status
		if sn.proc.alive() {
			status = m.refresh(sn.proc)
		}
		switch {
		case s.closing.Load():
			return "the supervisor is shutting down"
		case sn.restarts > startRestarts || status == statusFailed:
			return "its runner exited: " + lastErrorText(m)
		case status == statusError:
			return "it went to error: " + lastErrorText(m)
		}
		if !time.Now().Before(deadline) {
			if !settledStatus(m, status) {
				return fmt.Sprintf("it was not running at the end of the %s probe (status %s)", a.probe, status)
			}
			if rate, n := errorRate(before, m.page.Stats(false)); a.maxErrorRate > 0 && n > 0 && rate > a.maxErrorRate {
				return fmt.Sprintf("%.1f%% of its %d messages failed in the %s probe, over the %.1f%% allowed (max_error_rate %g)",
					rate*100, n, a.probe, a.maxErrorRate*100, a.maxErrorRate)
			}
			return ""
		}
		<-tick.C
	}
}

// settledStatus reports whether status is where a healthy connector is: running, or paused when an
// operator paused it, or standby (a source replica waiting for its lease).
func settledStatus(m *managed, status string) bool {
	m.mu.Lock()
	paused := m.target == targetPaused
	m.mu.Unlock()
	return status == statusRunning || status == statusStandby || (paused && status == statusPaused)
}

func lastErrorText(m *managed) string {
	if _, msg := m.statusNow(); msg != "" {
		return msg
	}
	return "(no error recorded)"
}

// errorRate is the failed share of the messages between two readings of a connector's counters:
// the larger of the errors and the dead-lettered records over the messages a sink consumed or a
// source produced; n is that message count.
func errorRate(before, after metrics.ConnectorStats) (rate float64, n uint64) {
	delta := func(a, b *uint64) uint64 {
		if b == nil {
			return 0
		}
		var x uint64
		if a != nil {
			x = *a
		}
		return *b - min(x, *b)
	}
	n = delta(before.MessagesConsumed, after.MessagesConsumed) + delta(before.MessagesProduced, after.MessagesProduced)
	if n == 0 {
		return 0, 0
	}
	errs := after.Errors - min(before.Errors, after.Errors)
	failed := max(errs, delta(before.MessagesDeadLettered, after.MessagesDeadLettered))
	return math.Min(float64(failed)/float64(n), math.MaxFloat64), n
}

// position is where a connector left off: a sink's stored offsets per topic and partition (nil:
// none stored), or a source's state.
type position struct {
	offsets map[sinkTopic]map[uint32]*uint64
	state   []byte
}

// savePosition reads where the connector of cfg left off (its runner is stopped).
func (s *Supervisor) savePosition(ctx context.Context, cfg config.Connector) (position, error) {
	ctx, cancel := context.WithTimeout(ctx, s.slowBudget())
	defer cancel()
	var p position
	if cfg.Kind == config.KindSource {
		if !s.iggyState() {
			data, _, err := state.Current(s.statePath, cfg.Key)
			p.state = data
			return p, err
		}
		client, err := dialIggy(ctx, s, iggyclient.Dial)
		if err != nil {
			return p, err
		}
		defer client.Close()
		p.state, _, err = s.iggyStateBackend(client).Current(ctx, cfg.Key)
		return p, err
	}
	admin, err := dialIggy(ctx, s, iggyclient.DialAdmin)
	if err != nil {
		return p, err
	}
	defer admin.Close()
	p.offsets = map[sinkTopic]map[uint32]*uint64{}
	for _, t := range sinkTopics(cfg) {
		parts, err := admin.Partitions(ctx, t.stream, t.topic)
		if err != nil {
			return p, err
		}
		p.offsets[t] = map[uint32]*uint64{}
		for _, part := range parts {
			stored, has, err := admin.GroupOffset(ctx, t.stream, t.topic, t.group, part.ID)
			if err != nil {
				return p, err
			}
			if has {
				p.offsets[t][part.ID] = &stored
			} else {
				p.offsets[t][part.ID] = nil
			}
		}
	}
	return p, nil
}

// restorePosition puts a saved position back (the connector's runner is stopped).
func (s *Supervisor) restorePosition(ctx context.Context, cfg config.Connector, p position) error {
	ctx, cancel := context.WithTimeout(ctx, s.slowBudget())
	defer cancel()
	if cfg.Kind == config.KindSource {
		if !s.iggyState() {
			return state.Replace(s.statePath, cfg.Key, p.state)
		}
		client, err := dialIggy(ctx, s, iggyclient.Dial)
		if err != nil {
			return err
		}
		defer client.Close()
		saver, _, err := s.iggyStateBackend(client).Open(ctx, cfg.Key)
		if err == nil {
			err = errors.Join(saver.Save(ctx, p.state), saver.Close())
		}
		return err
	}
	admin, err := dialIggy(ctx, s, iggyclient.DialAdmin)
	if err != nil {
		return err
	}
	defer admin.Close()
	var errs []error
	for t, parts := range p.offsets {
		set, unset := map[uint32]uint64{}, []uint32{}
		for id, off := range parts {
			if off == nil {
				unset = append(unset, id)
			} else {
				set[id] = *off
			}
		}
		if len(set) > 0 {
			errs = append(errs, admin.SetGroupOffsets(ctx, t.stream, t.topic, t.group, set))
		}
		if len(unset) > 0 {
			errs = append(errs, admin.DeleteGroupOffsets(ctx, t.stream, t.topic, t.group, unset))
		}
	}
	return errors.Join(errs...)
}

// dialIggy connects with the settings every runner gets ([iggy]), as the offsets routes do, through
// dial (iggyclient.Dial or iggyclient.DialAdmin).
func dialIggy[T any](ctx context.Context, s *Supervisor, dial func(context.Context, iggyclient.Options) (T, error)) (T, error) {
	i := s.runtime.Iggy
	token, err := i.ResolveToken()
	if err != nil {
		var none T
		return none, fmt.Errorf("iggy.token: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, iggyDialTimeout)
	defer cancel()
	return dial(ctx, iggyclient.Options{
		Address: i.Address, Username: i.Username, Password: i.Password, Token: token,
		TLSEnabled: i.TLS.Enabled, TLSCAFile: i.TLS.CAFile, TLSDomain: i.TLS.Domain, Protocol: i.Protocol,
		HeartbeatInterval: -1, Logger: s.log.With("component", "iggy"),
	})
}

// rollback puts the previous version back: active in the provider, its position restored, its
// runner started. It returns notes on what did not work (or "").
func (s *Supervisor) rollback(ctx context.Context, m *managed, prev config.Connector, prevPath string, from uint64, reason string, saved position, saveErr error) string {
	ctx = context.WithoutCancel(ctx) // the client going away must not leave the connector half-rolled-back
	var notes []string
	if err := s.provider.SetActive(ctx, m.kind, m.key, prev.Version); err != nil {
		notes = append(notes, fmt.Sprintf("recording version %d as active again failed: %v", prev.Version, err))
	}
	m.stopLoop()
	if saveErr != nil {
		notes = append(notes, "not rewound: "+saveErr.Error())
	} else if err := s.restorePosition(ctx, prev, saved); err != nil {
		notes = append(notes, "rewinding to where it left off failed: "+err.Error())
	}
	if err := <-m.launch(prev, prevPath); err != nil {
		notes = append(notes, fmt.Sprintf("version %d did not start again: %v", prev.Version, err))
	}
	m.mu.Lock()
	m.rollback = &rollbackInfo{From: from, Kept: prev.Version, Reason: reason, At: time.Now()}
	m.mu.Unlock()
	s.runtimeMetrics.IncRollbacks(m.key, string(m.kind))
	s.log.Warn("activation rolled back", "connector", m.label(), "version", from, "kept", prev.Version, "reason", reason,
		"notes", strings.Join(notes, "; "))
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}
