package devbroker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// DefaultAddress is where the real server and the SDK meet by default.
const DefaultAddress = "127.0.0.1:8090"

// Config configures a Server. The zero value is usable: it listens on
// DefaultAddress with root user iggy/iggy and no TLS.
type Config struct {
	// Address is the TCP listen address; "127.0.0.1:0" picks a free port.
	Address string
	// RootUsername and RootPassword are the only user's credentials (user id 0).
	RootUsername string
	RootPassword string
	// TLSCertFile and TLSKeyFile are PEM files; when both are set the server speaks TLS.
	TLSCertFile string
	TLSKeyFile  string
	// PersonalAccessTokens are accepted by LoginWithPersonalAccessToken, as the root user.
	PersonalAccessTokens []PersonalAccessToken
	// Streams are created at start (and again by Restart without data).
	Streams []StreamConfig
	// RetainBytesPerPartition caps what each partition keeps: beyond it the
	// oldest batches are dropped and their memory reused, as segment deletion
	// would on a real server. 0 keeps everything, like the real server's
	// defaults. A cap makes long benchmarks run in constant memory, and faster
	// where touching fresh memory is slow.
	RetainBytesPerPartition uint64
	// HeartbeatInterval turns on Iggy's heartbeat verification ([heartbeat] enabled = true,
	// interval): every interval, a client whose last ping (or connect) is older than 1.2
	// intervals is dropped from its consumer groups, and its connection answers every later
	// command with status 30 (stale client), until it reconnects. 0 (the default, as on a real
	// server) never drops an open connection, however silent. Over 0.9 only silent consumer-group
	// members are dropped (any request counts as liveness): they get Eviction 13 and are closed.
	HeartbeatInterval time.Duration
	// Protocol forces the protocol every connection speaks: "0.8" or "0.9".
	// Empty (or "auto") chooses per connection from the first bytes the client
	// sends: a 0.9 request starts with a zero checksum, a 0.8 one with its
	// non-zero length.
	Protocol string
	// Logger receives connection and error logs; nil discards them.
	Logger *slog.Logger
}

// Protocol names of Config.Protocol.
const (
	ProtocolAuto = "auto"
	Protocol08   = "0.8"
	Protocol09   = "0.9"
)

// ErrUnknownProtocol is a Config.Protocol other than "", auto, 0.8 and 0.9.
var ErrUnknownProtocol = errors.New(`unknown protocol: want "0.8", "0.9" or "auto"`)

func validProtocol(p string) bool {
	return p == "" || p == ProtocolAuto || p == Protocol08 || p == Protocol09
}

// PersonalAccessToken is a token string the server accepts at login.
type PersonalAccessToken struct {
	Token string
	// ExpiresAt is when the token stops working; zero means never.
	ExpiresAt time.Time
}

// StreamConfig is a stream to create at start, with its topics.
type StreamConfig struct {
	Name   string
	Topics []TopicConfig
}

// TopicConfig is a topic to create at start.
type TopicConfig struct {
	Name       string
	Partitions uint32
}

// Sentinel errors of the in-process API.
var (
	ErrStreamNotFound = errors.New("stream not found")
	ErrTopicNotFound  = errors.New("topic not found")
	ErrGroupNotFound  = errors.New("consumer group not found")
	ErrNotStarted     = errors.New("dev broker not started")
	ErrAlreadyStarted = errors.New("dev broker already started")
)

// Server is an in-memory Iggy 0.8 and 0.9 server. Create it with New, then Start it.
type Server struct {
	cfg       Config
	log       *slog.Logger
	tlsConfig *tls.Config

	mu        sync.Mutex
	data      *store
	listener  net.Listener
	addr      string // the bound address, kept for Restart
	conns     map[net.Conn]struct{}
	clients   map[uint32]*session
	stopping  bool
	wg        sync.WaitGroup
	ctx       context.Context // from Start; its end stops the server, across restarts
	stopWatch context.CancelFunc

	nextClientID  atomic.Uint32
	nextSession09 atomic.Uint64 // 0.9 session ids, from 1
}

// New returns a server for cfg, filling in defaults; it does not listen yet.
func New(cfg Config) *Server {
	if cfg.Address == "" {
		cfg.Address = DefaultAddress
	}
	if cfg.RootUsername == "" {
		cfg.RootUsername = "iggy"
	}
	if cfg.RootPassword == "" {
		cfg.RootPassword = "iggy"
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Server{cfg: cfg, log: logger, conns: map[net.Conn]struct{}{}, clients: map[uint32]*session{}}
}

// Start creates the configured streams, binds the address and serves
// connections in the background until Stop is called or ctx is done.
func (s *Server) Start(ctx context.Context) error {
	if !validProtocol(s.cfg.Protocol) {
		return fmt.Errorf("dev broker protocol %q: %w", s.cfg.Protocol, ErrUnknownProtocol)
	}
	if s.cfg.TLSCertFile != "" || s.cfg.TLSKeyFile != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
		if err != nil {
			return fmt.Errorf("load TLS certificate %q and key %q: %w", s.cfg.TLSCertFile, s.cfg.TLSKeyFile, err)
		}
		s.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	data, err := s.initialData()
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.listener != nil {
		s.mu.Unlock()
		return ErrAlreadyStarted
	}
	if s.data == nil { // setup helpers called before Start already made the store
		s.data = data
	}
	s.mu.Unlock()
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	if s.cfg.HeartbeatInterval > 0 {
		go s.verifyHeartbeats(ctx, s.cfg.HeartbeatInterval)
	}
	return s.listen(s.cfg.Address)
}

// verifyHeartbeats drops silent clients as Iggy 0.8's heartbeat verifier does: checked every
// interval, stale after 1.2 intervals without a ping.
func (s *Server) verifyHeartbeats(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	maxSilence := interval * 6 / 5
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now().UnixNano()
		var silent []*session
		s.mu.Lock()
		data := s.data
		for _, sess := range s.clients {
			if now-sess.lastPing.Load() > int64(maxSilence) {
				silent = append(silent, sess)
			}
		}
		s.mu.Unlock()
		for _, sess := range silent {
			// 0.9 evicts only silent consumer-group members; 0.8 drops every silent client.
			if sess.v09.Load() && (data == nil || len(data.groupsOf(sess.clientID)) == 0) {
				continue
			}
			sess.stale.Store(true)
			s.mu.Lock()
			delete(s.clients, sess.clientID)
			s.mu.Unlock()
			s.log.Info("stale client dropped: no heartbeat", "client_id", sess.clientID, "address", sess.address)
			if data != nil {
				data.dropClient(sess.clientID)
			}
			if sess.v09.Load() && sess.wake != nil {
				sess.wake() // its connection sends Eviction 13 and closes
			}
		}
	}
}

// watch stops the server when the Start context ends; Stop ends the watch.
func (s *Server) watch(ctx context.Context) {
	if ctx == nil || ctx.Done() == nil {
		return
	}
	watchCtx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.stopWatch = cancel
	s.mu.Unlock()
	go func() {
		<-watchCtx.Done()
		if ctx.Err() != nil {
			s.Stop()
		}
	}()
}

func (s *Server) initialData() (*store, error) {
	data := newStore()
	data.retainBytes = s.cfg.RetainBytesPerPartition
	for _, sc := range s.cfg.Streams {
		if err := validName(sc.Name); err != nil {
			return nil, fmt.Errorf("configured stream %q: %w", sc.Name, err)
		}
		st, err := data.createStream(sc.Name)
		if err != nil {
			return nil, fmt.Errorf("create configured stream %q: %w", sc.Name, err)
		}
		for _, tc := range sc.Topics {
			if err := validName(tc.Name); err != nil {
				return nil, fmt.Errorf("configured topic %q in stream %q: %w", tc.Name, sc.Name, err)
			}
			if _, err := data.createTopic(iggywire.NumericID(st.id), tc.Name, topicSettings{partitions: tc.Partitions, compression: 1}, nil); err != nil {
				return nil, fmt.Errorf("create configured topic %q in stream %q: %w", tc.Name, sc.Name, err)
			}
		}
	}
	return data, nil
}

func validName(name string) error {
	if len(name) == 0 || len(name) > 255 {
		return fmt.Errorf("name must be 1 to 255 bytes, got %d", len(name))
	}
	return nil
}

func (s *Server) listen(address string) error {
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("dev broker listen on %s: %w", address, err)
	}
	if s.tlsConfig != nil {
		ln = tls.NewListener(ln, s.tlsConfig)
	}
	s.mu.Lock()
	s.listener = ln
	s.addr = ln.Addr().String()
	s.stopping = false
	ctx := s.ctx
	s.mu.Unlock()
	s.watch(ctx)
	s.log.Info("dev broker listening", "address", ln.Addr().String(), "tls", s.tlsConfig != nil)
	s.wg.Add(1)
	go s.acceptLoop(ln)
	return nil
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Error("dev broker accept failed", "error", err)
			}
			return
		}
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			_ = conn.Close()
			continue
		}
		s.conns[conn] = struct{}{}
		data := s.data
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(conn, data)
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
		}()
	}
}

// Addr returns the bound address ("127.0.0.1:41234"), or "" before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Stop closes the listener, tells idle connections the server is going away
// (status 8, as the real server does), closes every connection and waits for
// them. Data stays in memory for Restart. Stop is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	ln := s.listener
	s.listener = nil
	s.stopping = true
	if s.stopWatch != nil {
		s.stopWatch()
		s.stopWatch = nil
	}
	for conn := range s.conns {
		// Waking the reader lets the connection's own goroutine send status 8
		// between requests, so a reply in progress is never interleaved.
		_ = conn.SetReadDeadline(time.Now())
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
	}
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	s.wg.Wait()
}

// Restart stops the server and listens again on the same address, so clients
// can reconnect. With keepData false everything is forgotten and the
// configured streams are created afresh.
func (s *Server) Restart(keepData bool) error {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()
	if addr == "" {
		return ErrNotStarted
	}
	s.Stop()
	if !keepData {
		data, err := s.initialData()
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.data = data
		s.mu.Unlock()
	}
	return s.listen(addr)
}

func (s *Server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

func (s *Server) currentData() *store {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		data, err := s.initialData()
		if err != nil {
			data = newStore() // Start reports the configuration error
			data.retainBytes = s.cfg.RetainBytesPerPartition
		}
		s.data = data
	}
	return s.data
}
