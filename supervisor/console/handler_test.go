package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/supervisor/console"
)

// Every answer of the console carries the browser security headers; the page and its modules
// are served with their types, revalidated by ETag; the path without its slash is redirected.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(console.Handler())
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(method, path string, header http.Header) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp, b.String()
	}
	cases := []struct {
		method, path string
		status       int
		contentType  string
		bodyHas      string
	}{
		{"GET", "/ui/", 200, "text/html; charset=utf-8", `<script type="module" src="js/main.js"></script>`},
		{"GET", "/ui/index.html", 200, "text/html; charset=utf-8", "iggy-connectors console"},
		{"GET", "/ui/js/main.js", 200, "text/javascript; charset=utf-8", "import"},
		{"GET", "/ui/console.css", 200, "text/css; charset=utf-8", "prefers-color-scheme: dark"},
		{"GET", "/ui/favicon.svg", 200, "image/svg+xml", "<svg"},
		{"HEAD", "/ui/", 200, "text/html; charset=utf-8", ""},
		{"GET", "/ui/nope.js", 404, "", "no such console file"},
		{"GET", "/ui/js/", 404, "", ""},
		{"GET", "/ui", 301, "", ""},
	}
	for _, c := range cases {
		resp, body := get(c.method, c.path, nil)
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
			continue
		}
		h := resp.Header
		for name, want := range map[string]string{
			"Content-Security-Policy": console.ContentSecurityPolicy,
			"X-Frame-Options":         "DENY",
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
		} {
			if got := h.Get(name); got != want {
				t.Errorf("%s %s: %s %q, want %q", c.method, c.path, name, got, want)
			}
		}
		if c.contentType != "" && h.Get("Content-Type") != c.contentType {
			t.Errorf("%s %s: Content-Type %q, want %q", c.method, c.path, h.Get("Content-Type"), c.contentType)
		}
		if c.bodyHas != "" && !strings.Contains(body, c.bodyHas) {
			t.Errorf("%s %s: body does not hold %q", c.method, c.path, c.bodyHas)
		}
		if c.method == "HEAD" && body != "" {
			t.Errorf("HEAD %s: a body", c.path)
		}
		if c.status == 301 && h.Get("Location") != console.Path {
			t.Errorf("%s %s: Location %q, want %q", c.method, c.path, h.Get("Location"), console.Path)
		}
	}
	resp, _ := get("GET", "/ui/js/main.js", nil)
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("main.js: ETag %q, Cache-Control %q: want an ETag and no-cache", etag, resp.Header.Get("Cache-Control"))
	}
	if resp, body := get("GET", "/ui/js/main.js", http.Header{"If-None-Match": {etag}}); resp.StatusCode != 304 || body != "" {
		t.Fatalf("main.js with If-None-Match: %d (%d bytes), want 304 and no body", resp.StatusCode, len(body))
	}
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(console.ContentSecurityPolicy, directive) {
			t.Errorf("the policy lacks %s", directive)
		}
	}
	if strings.Contains(console.ContentSecurityPolicy, "unsafe") {
		t.Errorf("the policy allows something unsafe: %s", console.ContentSecurityPolicy)
	}
}

// The assets hold no inline script or style, no eval, no markup built from strings and no
// address of another origin: what the policy forbids is not even attempted (the browser tests
// prove none is reported).
func TestAssetsNeedNothingThePolicyForbids(t *testing.T) {
	forbidden := []struct {
		what string
		re   *regexp.Regexp
		in   string // file extension it applies to; "" any
	}{
		{"an inline script", regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), ".html"},
		{"an inline style element", regexp.MustCompile(`<style`), ".html"},
		{"a style attribute", regexp.MustCompile(`\sstyle=`), ".html"},
		{"an inline event handler", regexp.MustCompile(`\son[a-z]+=`), ".html"},
		{"eval", regexp.MustCompile(`\beval\(|new Function\(|setTimeout\(\s*['"]|setInterval\(\s*['"]`), ".js"},
		{"markup from strings", regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write`), ".js"},
		{"a style attribute set from script", regexp.MustCompile(`setAttribute\(\s*['"]style`), ".js"},
		{"an address of another origin", regexp.MustCompile(`https?://(?:[a-z0-9.-]+)`), ""},
		{"an import of another origin", regexp.MustCompile(`@import|url\(\s*['"]?(?:https?:)?//`), ".css"},
	}
	root := "assets"
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(body)
		// The SVG namespace is a name, not an address the page loads.
		text = strings.ReplaceAll(text, "http://www.w3.org/2000/svg", "")
		for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(text, -1) {
			if !strings.Contains(tag, " src=") {
				t.Errorf("%s holds a script without src: %q", path, tag)
			}
		}
		for _, f := range forbidden {
			if f.in != "" && filepath.Ext(path) != f.in {
				continue
			}
			if m := f.re.FindString(text); m != "" {
				t.Errorf("%s holds %s: %q", path, f.what, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
