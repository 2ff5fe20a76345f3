package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/httpguard"
	"github.com/iggy-connectors-go/runtime/pkg/logging"
	"github.com/iggy-connectors-go/runtime/pkg/metrics"
	"github.com/iggy-connectors-go/runtime/pkg/pluginpath"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// RuntimeVersion is the upstream runtime version this build emulates; /stats reports it.
const RuntimeVersion = "0.5.0-edge.4"

// Supervisor runs one runner process per connector and serves the REST API over them.
type Supervisor struct {
	env       Env
	runtime   config.Runtime
	environ   []string // the process environment, dotenv included
	provider  provider.Provider
	log       *slog.Logger
	runnerLog *slog.Logger // relayed runner lines
	runnerBin string
	sockDir   string
	ownsSock  bool
	statePath string
	plugins   pluginpath.AllowList // where plugins may be loaded from
	guard     *httpguard.Guard     // the REST API's access policy

	nextID atomic.Uint32

	connectors map[config.ConnectorKind]map[string]*managed
	ordered    []*managed // sources first, then sinks, each sorted by key

	registry       *prometheus.Registry
	runtimeMetrics *metrics.Runtime
	merged         *metrics.Merged
	sampler        *metrics.Sampler
	startTime      time.Time

	figuresMu    sync.Mutex
	figures      processFigures // the latest once-a-second sample
	stopSampling chan struct{}

	metricsHandler http.Handler

	// fleet is set in attach mode ([fleet] enabled, fleet.go): nothing is spawned.
	fleet *attached

	api      *http.Server
	listener net.Listener
	apiDone  chan error

	closing      atomic.Bool
	shutdownOnce sync.Once

	// streamsEnd is closed at shutdown, so open tap and logs streams end (api_tap.go).
	streamsEnd                chan struct{}
	streamsOnce, streamsClose sync.Once

	validations, offsetsCalls, previews gate // admission.go

	own      ownLog    // the supervisor's own log filter at run time (api_loglevel.go)
	logRings *LogRings // each connector's recent log records (api_logs.go)
}

// Options are what New needs besides the runtime config.
type Options struct {
	Runtime  config.Runtime
	Environ  []string // process environment (dotenv merged); connector overrides are read from it
	Provider provider.Provider
	Logger   *slog.Logger
	// Resolver answers fleet.dns in attach mode; nil is the system's (tests use their own DNS server).
	Resolver *net.Resolver
	// RunnerLog receives every runner output line, tagged with its connector_key. Runners export
	// their own telemetry, so it should print only; nil means Logger.
	RunnerLog *slog.Logger
	// LogLevel is Logger's handler when its filter can change at run time (PUT /log_level); nil:
	// the supervisor's own filter is fixed.
	LogLevel LevelSetter
	// LogRings keeps each connector's recent log records (GET .../logs); its Handler should be
	// among Logger's handlers so the supervisor's own lines about a connector are kept too. Nil
	// makes one that keeps the runners' lines only.
	LogRings *LogRings
}

// New prepares a supervisor: it reads the supervisor variables, finds the runner binary and the
// state and socket directories. Nothing is started yet.
func New(o Options) (*Supervisor, error) {
	e, err := ParseEnv(o.Environ)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Runtime.Fleet.Enabled {
		guard, err := httpguard.New(o.Runtime.HTTP)
		if err != nil {
			return nil, err
		}
		s, err := newAttached(o, e, guard)
		if s != nil {
			s.own.setter = o.LogLevel
		}
		return s, err
	}
	bin, err := e.runnerBinary()
	if err != nil {
		return nil, err
	}
	log := o.Logger
	runnerLog := o.RunnerLog
	if runnerLog == nil {
		runnerLog = log
	}
	// The access policy is checked before anything starts: a bad http.allowed_hosts stops startup.
	guard, err := httpguard.New(o.Runtime.HTTP)
	if err != nil {
		return nil, err
	}
	statePath, err := filepath.Abs(o.Runtime.State.Path)
	if err != nil {
		return nil, fmt.Errorf("state.path %q: %w", o.Runtime.State.Path, err)
	}
	if err := os.MkdirAll(statePath, 0o755); err != nil {
		return nil, fmt.Errorf("state.path %q: %w", o.Runtime.State.Path, err)
	}
	if err := writableDir(statePath); err != nil {
		return nil, fmt.Errorf("state.path %q: the state directory %s is not writable by uid %d (%w): give that user write access to it (chown the directory or volume to uid %[3]d, or set the pod's fsGroup in Kubernetes)",
			o.Runtime.State.Path, statePath, os.Geteuid(), err)
	}
	s := &Supervisor{
		env: e, runtime: o.Runtime, environ: o.Environ, provider: o.Provider, log: log,
		runnerLog: runnerLog, runnerBin: bin, statePath: statePath, guard: guard,
		connectors:   map[config.ConnectorKind]map[string]*managed{config.KindSink: {}, config.KindSource: {}},
		registry:     prometheus.NewRegistry(),
		sampler:      metrics.NewSampler(),
		stopSampling: make(chan struct{}),
		validations:  newGate(maxValidations),
		offsetsCalls: newGate(maxOffsetsCalls),
		previews:     newGate(maxPreviews),
		logRings:     o.LogRings,
	}
	if s.logRings == nil {
		s.logRings = NewLogRings(o.Runtime.HTTP.Secrets())
	}
	s.own.setter = o.LogLevel
	// Until Start has listed the connector configs, the default list has only the binary's plugins/.
	s.plugins = s.allowList(nil)
	s.runtimeMetrics = metrics.NewRuntime(s.registry)
	if err := metrics.RegisterResources(s.registry, s.connectorProcesses); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s.merged = metrics.NewMerged(s.registry)
	s.metricsHandler = metrics.Handler(s.merged, log)
	if e.RuntimeDir != "" {
		if err := os.MkdirAll(e.RuntimeDir, 0o700); err != nil {
			return nil, fmt.Errorf("IGGY_SUPERVISOR_RUNTIME_DIR=%q: %w", e.RuntimeDir, err)
		}
		// Runner sockets, stats pages and connector config files are this user's only. A directory
		// it does not own (a volume) keeps its mode; the config files in it are 0600 anyway.
		if err := os.Chmod(e.RuntimeDir, 0o700); err != nil {
			log.Warn("cannot make the runner directory private (0700); the connector config files in it are still 0600",
				"dir", e.RuntimeDir, "error", err)
		}
		s.sockDir = e.RuntimeDir
	} else {
		dir, err := os.MkdirTemp("", "iggy-connectors-")
		if err != nil {
			return nil, fmt.Errorf("runner socket directory: %w", err)
		}
		s.sockDir, s.ownsSock = dir, true
	}
	// A Unix socket path is limited to 108 bytes on Linux; leave room for the socket's name.
	if len(s.sockDir)+len("/source-99999.sock") >= 108 {
		if s.ownsSock {
			_ = os.RemoveAll(s.sockDir)
		}
		return nil, fmt.Errorf("runner socket directory %q is too long for Unix socket paths (set IGGY_SUPERVISOR_RUNTIME_DIR to a shorter one)", s.sockDir)
	}
	return s, nil
}

// Start loads the connector configs from the provider, starts a runner for every enabled one,
// waits until each settled (running, failed, or the start timeout passed), and then binds the API
// (as upstream, an answering port means the connectors were initialised).
func (s *Supervisor) Start(ctx context.Context) error {
	if s.fleet != nil {
		return s.startAttached(ctx)
	}
	configs, err := s.provider.List(ctx)
	if err != nil {
		return fmt.Errorf("load connector configs: %w", err)
	}
	s.plugins = s.allowList(configs)
	s.log.Info("plugins are loaded only from these directories", "allowed_dirs", strings.Join(s.plugins.Dirs(), ","))
	broken := s.brokenConfigs(ctx, configs)
	for _, b := range broken {
		configs = append(configs, b.stand)
	}
	var sources, sinks uint32
	for _, c := range configs {
		if c.Kind == config.KindSource {
			sources++
		} else {
			sinks++
		}
	}
	s.runtimeMetrics.SetTotals(sources, sinks)
	slices.SortFunc(configs, func(a, b config.Connector) int {
		if a.Kind != b.Kind {
			if a.Kind == config.KindSource {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	var pending []<-chan error
	for i, c := range configs {
		m := newManaged(s, c, filepath.Join(s.sockDir, socketName(c.Kind, i)))
		page, err := metrics.CreatePage(filepath.Join(s.sockDir, pageName(c.Kind, i)), c.Key, string(c.Kind))
		if err != nil {
			s.Shutdown()
			return fmt.Errorf("connector %s: %w", m.label(), err)
		}
		m.page = page
		s.connectors[c.Kind][c.Key] = m
		s.ordered = append(s.ordered, m)
		var targetProblem string
		m.target, targetProblem = s.loadTarget(c.Kind, c.Key) // before anything starts (docs/architecture.md, decision 13)
		if targetProblem != "" {
			m.lastErr = &metrics.LastError{Message: targetProblem, Timestamp: uint64(time.Now().UnixMicro())}
		}
		s.loadPersistedLogFilter(m) // overrides.go
		if b, ok := broken[connectorLabel(c)]; ok {
			m.placeholder = true
			m.setError(b.message)
			continue
		}
		if !c.Enabled {
			s.log.Info("connector disabled; not started", "connector", m.label())
			continue
		}
		// Instance ids as upstream numbers them: one counter from 1, sources before sinks, every
		// enabled connector (a failing one too); here in key order, upstream's being unspecified.
		m.id, m.idReserved = s.nextID.Add(1), true
		if m.target == targetStopped {
			s.log.Info("connector stopped by an operator; not started until POST /"+c.Kind.Plural()+"/"+c.Key+"/start", "connector", m.label())
			continue
		}
		path, err := s.prepare(c)
		if err != nil {
			m.setError(err.Error())
			s.log.Error("connector cannot start", "connector", m.label(), "error", err)
			continue
		}
		pending = append(pending, m.launch(c, path))
	}
	for _, p := range pending {
		<-p // failures are recorded on the connector; the supervisor keeps running
	}
	s.sampleProcesses()
	go s.sampleLoop()
	s.startTime = time.Now()
	if s.runtime.HTTP.Enabled {
		if err := s.serveAPI(); err != nil {
			s.Shutdown()
			return err
		}
	}
	return nil
}

// brokenConfig is a connector whose config does not load: a stand-in config (kind, key and what
// else the document told) and the load errors of its files.
type brokenConfig struct {
	stand   config.Connector
	message string
}

// brokenConfigs logs every connector config the provider could not load, one line each, and
// returns those whose key has no config that loads, by connector label: they are listed in error.
func (s *Supervisor) brokenConfigs(ctx context.Context, loaded []config.Connector) map[string]brokenConfig {
	have := map[string]bool{}
	for _, c := range loaded {
		have[connectorLabel(c)] = true
	}
	out := map[string]brokenConfig{}
	for _, b := range s.provider.Broken(ctx) {
		stand := config.Connector{Kind: b.Kind, Key: b.Key, Name: b.Name, Path: b.Path, Enabled: b.Enabled}
		label := connectorLabel(stand)
		if have[label] {
			s.log.Error("connector config does not load; its other versions are used", "connector", label, "file", b.Source, "error", b.Err)
			continue
		}
		s.log.Error("connector config does not load; connector not started", "connector", label, "file", b.Source, "error", b.Err)
		if prev, dup := out[label]; dup {
			prev.message += "; " + b.Err.Error()
			out[label] = prev
			continue
		}
		out[label] = brokenConfig{stand: stand, message: b.Err.Error()}
	}
	return out
}

// connectorLabel is "kind/key", as connectors are named in logs.
func connectorLabel(c config.Connector) string { return labelOf(c.Kind, c.Key) }

func labelOf(kind config.ConnectorKind, key string) string { return string(kind) + "/" + key }

// allowList is plugins.allowed_dirs when set, else the default: the directories of the plugins the
// startup configs name, and plugins/ next to the binary.
func (s *Supervisor) allowList(startup []config.Connector) pluginpath.AllowList {
	if dirs := s.runtime.Plugins.AllowedDirs; len(dirs) > 0 {
		return pluginpath.NewAllowList(dirs)
	}
	paths := make([]string, len(startup))
	for i, c := range startup {
		paths[i] = c.Path
	}
	return pluginpath.NewAllowList(pluginpath.DefaultAllowedDirs(paths))
}

// APIAddr is the bound address of the REST API ("" when disabled).
func (s *Supervisor) APIAddr() string {
	if s.listener == nil {
		return ""
	}
	return s.listener.Addr().String()
}

// Shutdown drains every runner, sources first and then sinks, each group in parallel, each runner
// getting DrainTimeout after SIGTERM before it is killed; then it stops the API.
func (s *Supervisor) Shutdown() {
	s.shutdownOnce.Do(func() {
		s.closing.Store(true)
		s.stopAttached()
		for _, kind := range []config.ConnectorKind{config.KindSource, config.KindSink} {
			var wg sync.WaitGroup
			for _, m := range s.ordered {
				if m.kind != kind {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					m.stopLoop()
				}()
			}
			wg.Wait()
		}
		s.endStreams() // after the drain, so a followed log shows the runners stopping
		if s.api != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.api.Shutdown(ctx)
			cancel()
		}
		close(s.stopSampling)
		for _, m := range s.ordered {
			// Every runner is gone: the page files can go too (a new supervisor starts from zero).
			// They stay mapped, since a request still in flight may read them.
			if m.page != nil {
				_ = os.Remove(m.page.Path())
			}
		}
		if s.ownsSock {
			_ = os.RemoveAll(s.sockDir)
		}
	})
}

// runnerEnv is the complete environment of one runner: the supervisor's environment without any
// IGGY_CONNECTORS_*/IGGY_SUPERVISOR_* variable or connector selector, then the runtime sections as
// IGGY_CONNECTORS_* variables (HTTP endpoint on the runner's socket), then the connector's file
// (handover.go), which the caller removes once the runner has read it.
func (s *Supervisor) runnerEnv(m *managed, cfg config.Connector, path string) (env, handover []string, err error) {
	cfg, overrides := s.runnerOverrides(m, cfg) // an operator's run-time log filter and rate limit
	doc, err := s.runnerDocument(cfg, path)
	if err != nil {
		return nil, nil, fmt.Errorf("connector %s: %w", m.label(), err)
	}
	env, handover, err = s.runnerBaseEnv("unix:"+m.socket, string(m.kind)+"-"+m.key)
	if err != nil {
		return nil, nil, fmt.Errorf("connector %s: %w", m.label(), err)
	}
	file, err := s.writeHandover(string(m.kind)+"-"+m.key, doc)
	if err != nil {
		removeAll(handover)
		return nil, nil, fmt.Errorf("connector %s: %w", m.label(), err)
	}
	env = append(env, overrides...)
	return append(env, runnerproc.EnvStatsPage+"="+m.page.Path(), runnerproc.EnvConfigPath+"="+file,
		runnerproc.EnvInstanceID+"="+strconv.FormatUint(uint64(m.snapshot().id), 10)), append(handover, file), nil
}

// runnerBaseEnv is a runner's environment without its connector: the supervisor's environment
// less its own and the connector variables, then the runtime sections, the endpoint on address.
// The variables that carry a secret of ours go to a private file named after prefix
// (runnerproc.EnvSecretsPath, handover.go), never into the environment; the files written are
// returned for the caller to remove once the runner has read them.
func (s *Supervisor) runnerBaseEnv(address, prefix string) (env, handover []string, err error) {
	public, secret := s.runnerRuntime(address).EnvironSplit()
	env = append(s.passedEnviron(), public...)
	if len(secret) == 0 {
		return env, nil, nil
	}
	doc, err := runnerproc.EncodeSecrets(secret)
	if err != nil {
		return nil, nil, fmt.Errorf("secrets file for the runner: %w", err)
	}
	file, err := s.writeHandover(prefix+"-secrets", doc)
	if err != nil {
		return nil, nil, err
	}
	return append(env, runnerproc.EnvSecretsPath+"="+file), []string{file}, nil
}

// passedEnviron is what a runner inherits of the supervisor's environment: everything but the
// supervisor's own variables and the connector ones, which the supervisor sets itself. What the
// operator set for plugins (cloud credentials, say) passes, as upstream's in-process plugins see it.
func (s *Supervisor) passedEnviron() []string {
	env := make([]string, 0, len(s.environ)+48)
	for _, kv := range s.environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, config.EnvPrefix), strings.HasPrefix(name, "IGGY_SUPERVISOR_"):
			continue
		case slices.Contains(runnerproc.SupervisorVars, name):
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runnerRuntime is the runtime configuration a runner gets: the supervisor's, its endpoint on
// address without a key (a private socket), its state directory, the plugin directories, JSON
// logs, and no [fleet] (a runner attaches to nothing).
func (s *Supervisor) runnerRuntime(address string) config.Runtime {
	rt := s.runtime
	rt.HTTP = config.HTTP{
		Enabled: true, Address: address,
		Metrics: config.HTTPMetrics{Enabled: true, Endpoint: "/metrics"},
		CORS:    config.DefaultRuntime().HTTP.CORS,
		TLS:     config.HTTPTLS{CertFile: rt.HTTP.TLS.CertFile, KeyFile: rt.HTTP.TLS.KeyFile},
		Limits:  rt.HTTP.Limits,
		// The tap is relayed from the runner (its masking and bounds are the supervisor's); the
		// runner keeps no log records, since the supervisor keeps the lines it relays.
		Tap: rt.HTTP.Tap, TapMaxDuration: rt.HTTP.TapMaxDuration,
		SecretKeys: rt.HTTP.SecretKeys, RevealSecrets: rt.HTTP.RevealSecrets,
	}
	rt.State.Path = s.statePath
	// The runner checks its plugin against the same list (the default was computed here).
	rt.Plugins.AllowedDirs = s.plugins.Dirs()
	// Structured lines, so the supervisor can re-render them in its own format.
	rt.Logging.Format = logging.FormatJSON
	rt.Fleet = config.DefaultRuntime().Fleet
	return rt
}

// lookup finds a connector of the running set.
func (s *Supervisor) lookup(kind config.ConnectorKind, key string) (*managed, bool) {
	m, ok := s.connectors[kind][key]
	return m, ok
}

// writableDir checks that this process can create files in dir, as the runners will when they save
// source state there, so a read-only or foreign-owned state volume fails at start with its name
// instead of at a source's first state save.
func writableDir(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
