package fleet_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/fleet"
)

// keyRecorder is a server that records the Api-Key of every request it gets.
type keyRecorder struct {
	mu   sync.Mutex
	keys []string
}

func (k *keyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.keys = append(k.keys, r.Method+" "+r.URL.Path+" "+r.Header.Get("Api-Key"))
	k.mu.Unlock()
	_, _ = w.Write([]byte(`{}`))
}

func (k *keyRecorder) seen() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys...)
}

// A runner that answers with a redirect to another host (any of the redirect statuses) never
// makes the fleet client follow it: the other host gets no request, so never the runner key, and
// the error names the runner and the Location. Polls and forwarded calls alike.
func TestRunnerRedirectsAreNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			other := &keyRecorder{}
			elsewhere := httptest.NewServer(other)
			t.Cleanup(elsewhere.Close)
			runner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+"/steal"+r.URL.Path, status)
			}))
			t.Cleanup(runner.Close)
			f, err := fleet.New(fleet.Options{Runners: []string{runner.URL}, Refresh: time.Second, RunnerAPIKey: "runner-key"})
			if err != nil {
				t.Fatal(err)
			}
			f.Refresh(context.Background())
			if s := f.Snapshot(); len(s.Replicas) != 0 || s.Pending != 1 {
				t.Fatalf("snapshot = %+v; want the redirecting runner not listed", s)
			}
			_, _, err = f.Call(context.Background(), 5*time.Second, http.MethodPost, runner.URL, "/pause")
			if got := other.seen(); len(got) != 0 {
				t.Fatalf("the host the runner redirected to received %q", got)
			}
			if err == nil || !strings.Contains(err.Error(), runner.URL+"/pause") || !strings.Contains(err.Error(), elsewhere.URL+"/steal/pause") {
				t.Fatalf("forwarded POST /pause: %v; want an error naming the runner and the Location", err)
			}
		})
	}
}
