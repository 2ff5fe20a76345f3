// Package browser starts a real headless Chromium (Debian's chromium package) for tests and
// benchmarks, and opens tabs in it that record what a page did: every request it sent, and every
// console message, uncaught exception and browser log entry (a Content-Security-Policy
// violation is one). It lives apart from pkg/testkit so that only the packages that drive a
// browser link chromedp.
//
// Files: browser.go (starting Chromium, tabs and their records, DOM waits).
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ErrNoChromium is returned when no Chromium binary is installed (make test installs Debian's).
var ErrNoChromium = errors.New("no chromium binary found: install Debian's chromium package (make test does)")

// ExecPath is the Chromium binary: the browser itself when Debian's is installed (its
// /usr/bin/chromium wrapper adds flags of its own, extensions among them), else one on PATH.
func ExecPath() (string, error) {
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		return "/usr/lib/chromium/chromium", nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Options are the allocator options every browser of the project starts with: headless, no
// sandbox (tests run as root), no GPU, and every background service off, since the build
// machines have no network beyond loopback and Chromium fails at start trying to reach it.
func Options(execPath, userDataDir string) []chromedp.ExecAllocatorOption {
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(userDataDir),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.WindowSize(1280, 900),
	)
	return opts
}

// Browser is one running Chromium.
type Browser struct {
	ctx    context.Context // the browser's first tab: every other tab is its child
	cancel func()
	dir    string
}

// Start launches Chromium with a fresh profile directory. Stop ends it and removes the profile.
func Start() (*Browser, error) {
	path, err := ExecPath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "iggy-chromium-")
	if err != nil {
		return nil, fmt.Errorf("chromium profile directory: %w", err)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), Options(path, dir)...)
	ctx, cancel := chromedp.NewContext(actx)
	// The first Do starts the browser and its first tab, which live as long as the context it is
	// given: ctx itself, so a start that hangs is ended by a timer instead.
	hung := time.AfterFunc(60*time.Second, cancel)
	defer hung.Stop()
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		acancel()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	return &Browser{ctx: ctx, cancel: func() { cancel(); acancel() }, dir: dir}, nil
}

// Stop ends the browser and removes its profile.
func (b *Browser) Stop() {
	b.cancel()
	os.RemoveAll(b.dir)
}

// Shared starts one browser for a test process on first use; TestMain stops it with StopShared.
var shared struct {
	once sync.Once
	b    *Browser
	err  error
}

// SharedBrowser is the test process's one browser, started on first use.
func SharedBrowser(tb testing.TB) *Browser {
	tb.Helper()
	shared.once.Do(func() { shared.b, shared.err = Start() })
	if shared.err != nil {
		tb.Fatalf("chromium: %v", shared.err)
	}
	return shared.b
}

// StopShared ends the shared browser, if one was started (call it from TestMain).
func StopShared() {
	if shared.b != nil {
		shared.b.Stop()
	}
}

// Tab is one browser tab and what it recorded.
type Tab struct {
	Ctx    context.Context
	cancel func()

	mu       sync.Mutex
	requests []string
	messages []Message
}

// Message is a console message, an uncaught exception or a browser log entry of the tab.
type Message struct {
	Kind   string // "console", "exception" or "log"
	Level  string // console: its type (log, warning, error ...); log: its level; exception: "error"
	Source string // log entries: where from ("network", "security", "javascript", ...)
	Text   string
	URL    string
}

func (m Message) String() string {
	s := m.Kind + " " + m.Level
	if m.Source != "" {
		s += " (" + m.Source + ")"
	}
	s += ": " + m.Text
	if m.URL != "" {
		s += " at " + m.URL
	}
	return s
}

// IsError reports whether the message is an error: an exception, a console.error, or a log entry
// of level error (failed loads and CSP violations are those).
func (m Message) IsError() bool {
	return m.Kind == "exception" || m.Level == "error"
}

// NewTab opens a tab in its own browser context (no cookies or storage shared with other tabs),
// closed at the end of the test (or by Close).
func (b *Browser) NewTab() (*Tab, error) {
	t := &Tab{}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(t.record))
	hung := time.AfterFunc(30*time.Second, cancel)
	defer hung.Stop()
	if err := chromedp.Do(ctx); err != nil { // the tab lives as long as ctx
		cancel()
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	t.Ctx, t.cancel = ctx, cancel
	return t, nil
}

// NewTab opens a tab of the test process's shared browser, closed at the end of the test.
func NewTab(tb testing.TB) *Tab {
	tb.Helper()
	t, err := SharedBrowser(tb).NewTab()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(t.Close)
	return t
}

// Close closes the tab.
func (t *Tab) Close() { t.cancel() }

func (t *Tab) record(ev any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		t.requests = append(t.requests, ev.Request.URL)
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			if a.Value != nil {
				parts = append(parts, string(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		t.messages = append(t.messages, Message{Kind: "console", Level: string(ev.Type), Text: strings.Join(parts, " ")})
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		t.messages = append(t.messages, Message{Kind: "exception", Level: "error", Text: text, URL: d.URL})
	case *log.EventEntryAdded:
		e := ev.Entry
		t.messages = append(t.messages, Message{Kind: "log", Level: string(e.Level), Source: string(e.Source), Text: e.Text, URL: e.URL})
	}
}

// Requests are the URLs of every request the tab sent so far, in order.
func (t *Tab) Requests() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.requests)
}

// Messages are the console messages, exceptions and log entries so far.
func (t *Tab) Messages() []Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.messages)
}

// Errors are the messages that are errors (Message.IsError).
func (t *Tab) Errors() []Message {
	var out []Message
	for _, m := range t.Messages() {
		if m.IsError() {
			out = append(out, m)
		}
	}
	return out
}

// Do runs actions in the tab, bounded by timeout.
func (t *Tab) Do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(t.Ctx, timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Text is the text content of the first element matching the CSS selector.
func (t *Tab) Text(timeout time.Duration, css string) (string, error) {
	ctx, cancel := context.WithTimeout(t.Ctx, timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(css)))
}

// TextAll is the text content of every element matching the CSS selector, one per line.
func (t *Tab) TextAll(timeout time.Duration, css string) (string, error) {
	ctx, cancel := context.WithTimeout(t.Ctx, timeout)
	defer cancel()
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll(css)))
	if err != nil {
		return "", err
	}
	var out []string
	for _, n := range nodes {
		text, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.NodeIDs([]cdp.NodeID{n.NodeID})))
		if err != nil {
			return "", err
		}
		out = append(out, text)
	}
	return strings.Join(out, "\n"), nil
}

// WaitVisible waits until an element matching the CSS selector is visible.
func (t *Tab) WaitVisible(timeout time.Duration, css string) error {
	if err := t.Do(timeout, chromedp.WaitVisible(chromedp.CSS(css))); err != nil {
		return fmt.Errorf("wait for %s to be visible: %w", css, err)
	}
	return nil
}

// WaitGone waits until no element matches the CSS selector.
func (t *Tab) WaitGone(timeout time.Duration, css string) error {
	if err := t.Do(timeout, chromedp.WaitNotPresent(chromedp.CSS(css))); err != nil {
		return fmt.Errorf("wait for %s to go: %w", css, err)
	}
	return nil
}
