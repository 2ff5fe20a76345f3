package console_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
	"github.com/iggy-connectors-go/runtime/pkg/testkit/browser"
)

// The console against the demo under a supervisor with an API key, driven as an operator would:
// the key is asked for and a wrong one refused; the overview lists the demo's connectors; a
// runner killed with SIGKILL shows its failure and then runs again; pause and resume from the
// connector page, which /stats confirms; another config version is compared and activated, and
// the runner restarts on it; a stopped sink's offset is rewound from the page; the live tap shows
// a message produced during the test with its payload, and the log pane follows and filters; every request stays on the supervisor's origin and the browser
// reports no error (a CSP violation would be one); a stopped supervisor shows as disconnected.
func TestConsole(t *testing.T) {
	t.Parallel()
	d := startDemo(t, apiKey)
	tab := newTab(t)
	origin := d.sup.URL("/")
	row := func(key string) string { return `#overview tr[data-key="` + key + `"]` }
	must(t, tab.Do(uiWait, chromedp.Navigate(d.page())))

	// Without the key: only the prompt, and only /stats asked (answered 401).
	must(t, tab.WaitVisible(uiWait, "#key-prompt #api-key"))
	text, err := tab.Text(uiWait, "main")
	must(t, err)
	for _, leak := range []string{"stdout", "random", "Connectors"} {
		if strings.Contains(text, leak) {
			t.Fatalf("the key prompt shows %q: %q", leak, text)
		}
	}
	for _, u := range tab.Requests() {
		if path := strings.TrimPrefix(u, origin); !strings.HasPrefix(path, "ui/") && path != "stats" {
			t.Fatalf("before the key the page asked %s", u)
		}
	}
	must(t, tab.Do(uiWait, chromedp.SendKeys(chromedp.CSS("#api-key"), "not-the-key"), chromedp.Click(chromedp.CSS("#key-submit"))))
	must(t, tab.WaitVisible(uiWait, `#key-error:not(:empty)`))
	if msg, _ := tab.Text(uiWait, "#key-error"); !strings.Contains(msg, "refused") {
		t.Fatalf("a wrong key: %q, want it refused", msg)
	}
	must(t, tab.Do(uiWait, chromedp.SendKeys(chromedp.CSS("#api-key"), apiKey), chromedp.Click(chromedp.CSS("#key-submit"))))
	beforeKey := len(tab.Messages())

	// The overview: the demo's connectors with their status.
	must(t, tab.WaitVisible(uiWait, row("sink/stdout")+` .badge[data-status="running"]`))
	must(t, tab.WaitVisible(uiWait, row("source/random")+` .badge[data-status="running"]`))
	if stored, _ := chromedp.Run(tab.Ctx, chromedp.Evaluate[string](`sessionStorage.getItem("iggy-connectors.api-key") + "|" + localStorage.length`)); stored != apiKey+"|0" {
		t.Fatalf("sessionStorage key | localStorage entries: %q, want %q", stored, apiKey+"|0")
	}

	// kill -9 the sink's runner: its row shows the failure, then running again.
	pid := d.stats(t)["sink/stdout"].PID
	if pid == 0 {
		t.Fatal("no runner pid for sink/stdout")
	}
	must(t, syscall.Kill(pid, syscall.SIGKILL))
	must(t, tab.WaitVisible(uiWait, row("sink/stdout")+` .badge[data-status="error"]`))
	must(t, tab.WaitVisible(uiWait, row("sink/stdout")+` .badge[data-status="running"]`))
	must(t, tab.WaitVisible(uiWait, row("sink/stdout")+` .err-msg`)) // the failure stays, with its time
	if n, _ := tab.Text(uiWait, row("sink/stdout")+" td.restarts"); strings.TrimSpace(n) != "1" {
		t.Fatalf("restarts shown: %q, want 1", n)
	}

	// By keyboard to the connector page: Tab to the sink's link, Enter.
	must(t, tab.Do(uiWait, chromedp.Focus(chromedp.CSS("a.brand"))))
	for i := 0; ; i++ {
		focused, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[string](`document.activeElement.closest("tr") ? document.activeElement.closest("tr").dataset.key : ""`))
		must(t, err)
		if focused == "sink/stdout" {
			break
		}
		if i == 20 {
			t.Fatal("20 Tab presses did not reach the sink's link")
		}
		must(t, tab.Do(uiWait, chromedp.KeyEvent(kb.Tab)))
	}
	outline, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[string](`getComputedStyle(document.activeElement).outlineStyle`))
	must(t, err)
	if outline == "none" || outline == "" {
		t.Fatalf("the focused link has no visible outline (%q)", outline)
	}
	must(t, tab.Do(uiWait, chromedp.KeyEvent(kb.Enter)))
	must(t, tab.WaitVisible(uiWait, `#status .badge[data-status="running"]`))

	// Pause from the page, with its confirmation; /stats agrees; the overview row too; resume.
	d.act(t, tab, "pause")
	must(t, tab.WaitVisible(uiWait, `#status .badge[data-status="paused"]`))
	if st := d.stats(t)["sink/stdout"].Status; st != "paused" {
		t.Fatalf("/stats says %q after the page paused the sink", st)
	}
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS("nav.crumbs a"))))
	must(t, tab.WaitVisible(uiWait, row("sink/stdout")+` .badge[data-status="paused"]`))
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS(row("sink/stdout")+" a.key"))))
	d.act(t, tab, "resume")
	must(t, tab.WaitVisible(uiWait, `#status .badge[data-status="running"]`))
	if st := d.stats(t)["sink/stdout"].Status; st != "running" {
		t.Fatalf("/stats says %q after the page resumed the sink", st)
	}

	// Another config version: the diff shows what changes; activating it restarts the runner on it.
	d.createQuietVersion(t)
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS("nav.crumbs a")))) // and back: the page reads the versions anew
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS(row("sink/stdout")+" a.key"))))
	must(t, tab.WaitVisible(uiWait, `#versions-table tr[data-version="1"] #activate-1`))
	must(t, tab.WaitVisible(uiWait, `#config-diff td.plus`))
	for sel, want := range map[string]string{"#config-diff": `"name": "Stdout sink (quiet)"`, "#config-diff td.minus": `"print_payload": true`} {
		if text, _ := tab.TextAll(uiWait, sel); !strings.Contains(text, want) {
			t.Fatalf("the diff's %s does not show %s: %q", sel, want, text)
		}
	}
	pid = d.stats(t)["sink/stdout"].PID
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS("#activate-1"))))
	confirm(t, tab)
	must(t, tab.WaitVisible(uiWait, `#versions-table tr[data-version="1"] .badge[data-status="running"]`))
	var versions []struct {
		Version uint64 `json:"version"`
		Active  bool   `json:"active"`
	}
	d.getJSON(t, "/sinks/stdout/configs", &versions)
	for _, v := range versions {
		if v.Active != (v.Version == 1) {
			t.Fatalf("after activating version 1 from the page: %+v", versions)
		}
	}
	if now := d.stats(t)["sink/stdout"]; now.PID == pid || now.PID == 0 || now.Status != "running" {
		t.Fatalf("the runner did not restart on version 1: pid %d -> %d, status %s", pid, now.PID, now.Status)
	}
	var detail struct{ Name string }
	d.getJSON(t, "/sinks/stdout", &detail)
	if detail.Name != "Stdout sink (quiet)" {
		t.Fatalf("the running config is named %q, want version 1's", detail.Name)
	}
	must(t, tab.WaitVisible(uiWait, `#status .badge[data-status="running"]`))

	// Offsets change only while stopped: stop, rewind the partition, start again.
	d.act(t, tab, "stop")
	must(t, tab.WaitVisible(uiWait, `#status .badge[data-status="stopped"]`))
	must(t, tab.WaitVisible(uiWait, `#offsets-table input`))
	must(t, tab.Do(uiWait, chromedp.Clear(chromedp.CSS("#offsets-table input")), chromedp.SendKeys(chromedp.CSS("#offsets-table input"), "2"),
		chromedp.Click(chromedp.CSS("#offsets-save"))))
	confirm(t, tab)
	must(t, tab.WaitVisible(uiWait, `#offsets-table input[value="2"]`))
	var offsets struct {
		Offsets []struct {
			Stored *uint64 `json:"stored_offset"`
		} `json:"offsets"`
	}
	d.getJSON(t, "/sinks/stdout/offsets", &offsets)
	if len(offsets.Offsets) != 1 || offsets.Offsets[0].Stored == nil || *offsets.Offsets[0].Stored != 2 {
		t.Fatalf("offsets after the page stored 2: %+v", offsets)
	}
	d.act(t, tab, "start")
	must(t, tab.WaitVisible(uiWait, `#status .badge[data-status="running"]`))

	// The live tap shows a message produced now, with its payload, as the sink's plugin gets it.
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS("#tap-toggle"))))
	must(t, tab.WaitVisible(uiWait, `#tap-status[data-state="tapping"]`))
	id, marker := d.produce(t)
	event := `#tap-events li.event[data-point="delivered"][data-id="` + id + `"] pre.payload`
	must(t, tab.WaitVisible(uiWait, event))
	if payload, _ := tab.Text(uiWait, event); !strings.Contains(payload, `"marker": "`+marker+`"`) {
		t.Fatalf("the tapped payload %q lacks the marker %s", payload, marker)
	}

	// The log pane follows the connector's records; at "warn and above" only those remain (the
	// kill above left at least one).
	must(t, tab.WaitVisible(uiWait, `#log-status[data-state="following"]`))
	must(t, tab.WaitVisible(uiWait, `#log-lines li.log[data-level="info"]`))
	must(t, tab.Do(uiWait, chromedp.Focus(chromedp.CSS("#log-level")), chromedp.KeyEvent("w")))
	must(t, tab.WaitVisible(uiWait, `#log-lines li.log[data-level="error"], #log-lines li.log[data-level="warn"]`))
	if n, _ := tab.TextAll(uiWait, `#log-lines li.log[data-level="info"]`); n != "" {
		t.Fatalf("info records at warn and above: %q", n)
	}
	screenshot(t, tab, "console-connector.png")

	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS("nav.crumbs a"))))
	must(t, tab.WaitVisible(uiWait, row("sink/stdout")+` .spark polyline`))
	screenshot(t, tab, "console-overview.png")

	// Nothing left for another origin; no console error, exception or CSP violation after the key
	// (before it, only the refused requests).
	for _, u := range tab.Requests() {
		if !strings.HasPrefix(u, origin) {
			t.Errorf("a request left for another origin: %s", u)
		}
	}
	for i, m := range tab.Messages() {
		if !m.IsError() && !strings.Contains(m.Text, "Content Security Policy") {
			continue
		}
		if i < beforeKey && m.Kind == "log" && m.Source == "network" && strings.Contains(m.Text, "401") {
			continue
		}
		t.Errorf("the browser reported: %s", m)
	}

	// The supervisor stops: the page says disconnected, not stale figures as live ones.
	d.sup.Kill9()
	must(t, tab.WaitVisible(uiWait, `#conn[data-state="disconnected"]`))
	must(t, tab.WaitVisible(uiWait, `#banner`))
	if b, _ := tab.Text(uiWait, "#banner"); !strings.Contains(b, "disconnected") || !strings.Contains(b, "not live") {
		t.Fatalf("banner: %q", b)
	}
	must(t, tab.WaitVisible(uiWait, `main.stale`))
}

// At 360 px wide and in a dark-mode browser the overview and the connector pages (a sink's and a
// source's) fit the width, and the page is dark.
func TestConsoleNarrowAndDark(t *testing.T) {
	t.Parallel()
	d := startDemo(t, "")
	tab := newTab(t)
	must(t, tab.Do(uiWait,
		chromedp.EmulateViewport(360, 740),
		func(ctx context.Context, target *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, target, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
			return chromedp.Void{}, err
		},
		chromedp.Navigate(d.page())))
	must(t, tab.WaitVisible(uiWait, `#overview tr[data-key="sink/stdout"] .badge[data-status="running"]`))
	width, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	must(t, err)
	if width > 360 {
		t.Errorf("the overview is %d px wide at a 360 px viewport", width)
	}
	bg, err := chromedp.Run(tab.Ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	must(t, err)
	if bg != "rgb(18, 20, 23)" {
		t.Errorf("body background in dark mode: %s", bg)
	}
	must(t, tab.Do(uiWait, chromedp.Navigate(d.page()+"#/sinks/stdout")))
	must(t, tab.WaitVisible(uiWait, `#offsets-table`))
	if width, _ = chromedp.Run(tab.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); width > 360 {
		t.Errorf("the connector page is %d px wide at a 360 px viewport", width)
	}
	if os.Getenv(screenshotsEnv) != "" {
		screenshot(t, tab, "console-narrow-dark.png")
	}
	// A source's page: its state instead of partitions.
	must(t, tab.Do(uiWait, chromedp.Navigate(d.page()+"#/sources/random")))
	must(t, tab.WaitVisible(uiWait, `#lag #offsets-refresh`))
	must(t, tab.WaitVisible(uiWait, `#status .badge[data-status="running"]`))
	if width, _ = chromedp.Run(tab.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); width > 360 {
		t.Errorf("the source's page is %d px wide at a 360 px viewport", width)
	}
	for _, m := range tab.Errors() {
		t.Errorf("the browser reported: %s", m)
	}
}

// stats are the supervisor's /stats connectors by "kind/key".
func (d *demo) stats(t *testing.T) map[string]connectorStats {
	t.Helper()
	var s struct {
		Connectors []connectorStats `json:"connectors"`
	}
	d.getJSON(t, "/stats", &s)
	out := map[string]connectorStats{}
	for _, c := range s.Connectors {
		out[c.Type+"/"+c.Key] = c
	}
	return out
}

type connectorStats struct {
	Key      string `json:"key"`
	Type     string `json:"connector_type"`
	Status   string `json:"status"`
	PID      int    `json:"pid"`
	Restarts int    `json:"restarts"`
}

func (d *demo) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, body, err := d.sup.Do(http.MethodGet, path, d.header(), "")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %s", path, err, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// produce sends one JSON message with a fresh marker to the demo's topic through the official
// SDK, and returns its id as the tap renders ids, and the marker.
func (d *demo) produce(t *testing.T) (id, marker string) {
	t.Helper()
	var raw [16]byte
	binary.LittleEndian.PutUint64(raw[:8], uint64(time.Now().UnixNano()))
	marker = fmt.Sprintf("console-%x", raw[:8])
	m, err := iggcon.NewIggyMessage([]byte(`{"marker":"`+marker+`"}`), iggcon.WithID(raw))
	must(t, err)
	testkit.SendMessages(t, d.broker, "demo_stream", "demo_topic", []iggcon.IggyMessage{m})
	return tap.IDBytes(raw), marker
}

// createQuietVersion stores version 1 of the demo's sink through the API: another name, and the
// payloads no longer printed.
func (d *demo) createQuietVersion(t *testing.T) {
	t.Helper()
	var active struct {
		Path    string          `json:"path"`
		Streams json.RawMessage `json:"streams"`
	}
	d.getJSON(t, "/sinks/stdout/configs/active", &active)
	body, _ := json.Marshal(map[string]any{"enabled": true, "name": "Stdout sink (quiet)", "path": active.Path,
		"streams": active.Streams, "plugin_config": map[string]any{"print_payload": false}})
	h := d.header()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	resp, out, err := d.sup.Do(http.MethodPost, "/sinks/stdout/configs", h, string(body))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("create version 1: %v %s", err, out)
	}
}

// act clicks an action of the connector page and confirms it.
func (d *demo) act(t *testing.T, tab *browser.Tab, op string) {
	t.Helper()
	must(t, tab.Do(uiWait, chromedp.WaitEnabled(chromedp.CSS("#action-"+op)), chromedp.Click(chromedp.CSS("#action-"+op))))
	confirm(t, tab)
}

// confirm answers the confirmation dialog with its OK button.
func confirm(t *testing.T, tab *browser.Tab) {
	t.Helper()
	must(t, tab.WaitVisible(uiWait, "dialog#confirm[open] #confirm-ok"))
	must(t, tab.Do(uiWait, chromedp.Click(chromedp.CSS("#confirm-ok"))))
	must(t, tab.WaitGone(uiWait, "dialog#confirm[open]"))
}

// screenshotsEnv names a directory the tests write their screenshots to (docs/images to refresh
// the committed ones); unset, they go to the test's temporary directory.
const screenshotsEnv = "IGGY_CONSOLE_SCREENSHOTS"

func screenshot(t *testing.T, tab *browser.Tab, name string) {
	t.Helper()
	png, err := chromedp.Run(tab.Ctx, chromedp.FullScreenshot(100))
	must(t, err)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	must(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
}

// newTab opens a tab that, when the test fails, leaves a screenshot and logs what the browser
// reported.
func newTab(t *testing.T) *browser.Tab {
	tab := browser.NewTab(t)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, m := range tab.Messages() {
			t.Logf("browser: %s", m)
		}
		ctx, cancel := context.WithTimeout(tab.Ctx, 5*time.Second)
		defer cancel()
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			path := filepath.Join(os.TempDir(), strings.ReplaceAll(t.Name(), "/", "_")+"-failure.png")
			if os.WriteFile(path, png, 0o644) == nil {
				t.Logf("the page at the failure: %s", path)
			}
		}
	})
	return tab
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
