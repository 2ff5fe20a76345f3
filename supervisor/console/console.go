package console

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// Path is where the supervisor serves the console: the page at Path, its assets below it.
const Path = "/ui/"

// ContentSecurityPolicy is sent with every asset: scripts, styles, images and API calls from the
// page's own origin only, no inline script or style, no eval, no framing, no plugins, no forms
// posting elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// contentTypes are the assets' types, fixed here rather than read from the system's MIME tables
// (a module script must be served as JavaScript, and nosniff forbids guessing).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".txt":  "text/plain; charset=utf-8",
}

// file is one embedded asset, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the console's page and assets under Path (GET and HEAD; the caller's mux picks
// the methods). Every answer carries the security headers; assets are revalidated by ETag, so
// a new binary's page is never mixed with an old cached script.
func Handler() http.Handler {
	files := map[string]file{}
	err := fs.WalkDir(assets, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := assets.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct, known := contentTypes[path.Ext(name)]
		if !known {
			return fmt.Errorf("%s: no content type for its extension", name)
		}
		files[strings.TrimPrefix(name, "assets/")] = file{body: body, contentType: ct,
			etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		panic("console: embedded assets: " + err.Error()) // the files are compiled in: cannot happen
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
		name, ok := strings.CutPrefix(r.URL.Path, Path)
		if !ok {
			// The path without its slash: the page's relative links need the slash.
			h.Set("Location", Path)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		if name == "" {
			name = "index.html"
		}
		f, ok := files[name]
		if !ok {
			http.Error(w, "no such console file: "+name, http.StatusNotFound)
			return
		}
		h.Set("Content-Type", f.contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, f.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(f.body)
		}
	})
}
