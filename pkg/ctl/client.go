package ctl

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The environment the server subcommands read, and their defaults.
const (
	EnvURL        = "IGGY_CONNECTORS_URL"
	EnvAPIKey     = "IGGY_CONNECTORS_HTTP_API_KEY" // the server's own variable for its key
	DefaultURL    = "http://localhost:8081"
	FormatJSON    = "json"
	FormatText    = "text"
	needsKeyHint  = "the server needs an API key: --api-key or " + EnvAPIKey
	unreachableOf = "cannot reach the server at %s (is iggy-connectors running there? --url or " + EnvURL + "): %v"
)

// Sentinel errors of a server call, for callers that branch.
var (
	ErrNeedsKey    = errors.New(needsKeyHint)
	ErrUnreachable = errors.New("server unreachable")
)

// clientFlags are the flags every server subcommand takes.
type clientFlags struct {
	url, apiKey, format string
}

// addClientFlags registers --url, --api-key and --format on fs, their defaults from env.
func addClientFlags(fs *flag.FlagSet, env Env) *clientFlags {
	vars := config.EnvMap(env.Environ)
	f := &clientFlags{}
	def := DefaultURL
	if v := strings.TrimSpace(vars[EnvURL]); v != "" {
		def = v
	}
	fs.StringVar(&f.url, "url", def, "the server's URL ("+EnvURL+")")
	fs.StringVar(&f.apiKey, "api-key", vars[EnvAPIKey], "the server's API key ("+EnvAPIKey+")")
	fs.StringVar(&f.format, "format", FormatJSON, "output: json (JSON lines) or text (for people)")
	return f
}

// client checks the flags and returns the client they describe.
func (f *clientFlags) client() (*client, error) {
	if f.format != FormatJSON && f.format != FormatText {
		return nil, fmt.Errorf("--format %q: want json or text", f.format)
	}
	base := strings.TrimRight(f.url, "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want http(s)://host:port", f.url)
	}
	return &client{base: base, apiKey: f.apiKey, text: f.format == FormatText, http: &http.Client{}}, nil
}

// client calls one server's REST API.
type client struct {
	base   string
	apiKey string
	text   bool
	http   *http.Client
}

// get sends GET path and returns the answer when it is 200; any other answer becomes an error
// naming the problem (a 401 says which key to give, an API error its reason).
func (c *client) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	if c.apiKey != "" {
		req.Header.Set("Api-Key", c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: "+unreachableOf, ErrUnreachable, c.base, rootCause(err))
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 8192))
	reason := strings.TrimSpace(string(body))
	if resp.StatusCode == http.StatusUnauthorized {
		switch {
		case c.apiKey != "":
			return nil, fmt.Errorf("%w (the key given was refused)", ErrNeedsKey)
		case reason != "":
			return nil, fmt.Errorf("%w (the server says: %s)", ErrNeedsKey, reason)
		}
		return nil, ErrNeedsKey
	}
	var apiErr struct{ Code, Reason string }
	if json.Unmarshal(body, &apiErr) == nil && apiErr.Reason != "" {
		reason = apiErr.Reason
	}
	if reason == "" {
		reason = http.StatusText(resp.StatusCode)
	}
	return nil, fmt.Errorf("GET %s%s: %d: %s", c.base, path, resp.StatusCode, reason)
}

// rootCause names a connection failure plainly: "connection refused" rather than the whole
// chain of the dial.
func rootCause(err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return syscall.ECONNREFUSED
	case errors.Is(err, syscall.EHOSTUNREACH):
		return syscall.EHOSTUNREACH
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// connector reads a subcommand's target, sinks/KEY or sources/KEY, as its API path.
func connector(arg string) (string, error) {
	kind, key, ok := strings.Cut(strings.Trim(arg, "/"), "/")
	if !ok || (kind != "sinks" && kind != "sources") || config.ValidKey(key) != nil {
		return "", fmt.Errorf("%q: want sinks/KEY or sources/KEY", arg)
	}
	return "/" + kind + "/" + key, nil
}

// parseArgs parses flags and positional arguments in any order.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// newFlagSet is a subcommand's flag set, writing its usage and errors to the command's stderr.
func newFlagSet(name, usage string, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: iggy-connectors %s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// target parses a server subcommand's arguments: exactly one sinks/KEY or sources/KEY, and the
// flags. Unless ok, the command ends with code: ExitOK after --help, ExitUsage (the problem
// written) on bad usage.
func target(name string, fs *flag.FlagSet, args []string, env Env) (path string, code int, ok bool) {
	positional, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return "", ExitOK, false
	}
	if err != nil {
		return "", ExitUsage, false // the flag package wrote why
	}
	if len(positional) != 1 {
		fmt.Fprintf(env.Stderr, "iggy-connectors %s: want one connector, sinks/KEY or sources/KEY (got %d arguments)\n", name, len(positional))
		fs.Usage()
		return "", ExitUsage, false
	}
	if path, err = connector(positional[0]); err != nil {
		fmt.Fprintf(env.Stderr, "iggy-connectors %s: %v\n", name, err)
		return "", ExitUsage, false
	}
	return path, ExitOK, true
}
