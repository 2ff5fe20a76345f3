package supervisor_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// forkingSinkC is a sink plugin that, on open, writes into DUMP_DIR the config it was given
// (config.json), its own environment (plugin.env), and forks a child that writes its environment
// (child.env) and then waits forever; the child's pid goes to child.pid. Every file is written
// whole, then renamed into place.
const forkingSinkC = `
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "iggy_connector.h"
extern char **environ;

static void put(const char *name, const char *data, size_t len) {
    char tmp[4096], dst[4096];
    snprintf(tmp, sizeof tmp, "%s/%s.tmp", DUMP_DIR, name);
    snprintf(dst, sizeof dst, "%s/%s", DUMP_DIR, name);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fwrite(data, 1, len, f);
    fclose(f);
    rename(tmp, dst);
}

static void put_env(const char *name) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (char **e = environ; *e; e++) fprintf(m, "%s\n", *e);
    fclose(m);
    put(name, buf, len);
    free(buf);
}

int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, iggy_log_cb log) {
    (void)id; (void)log;
    put("config.json", (const char *)cfg, cfg_len);
    put_env("plugin.env");
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        put_env("child.env");
        /* Only the runner's process-group stop is meant to end it; the alarm bounds its life
           when a test ends by SIGKILLing the supervisor, which takes the runner but not this. */
        struct sigaction dfl = {0};
        dfl.sa_handler = SIG_DFL; /* the Go runtime's handlers are inherited across fork */
        sigaction(SIGALRM, &dfl, NULL);
        sigset_t alrm;
        sigemptyset(&alrm);
        sigaddset(&alrm, SIGALRM);
        sigprocmask(SIG_UNBLOCK, &alrm, NULL);
        alarm(120);
        for (;;) pause();
    }
    char text[32];
    int n = snprintf(text, sizeof text, "%d", (int)pid);
    put("child.pid", text, (size_t)n);
    return 0;
}
int32_t iggy_sink_consume(uint32_t id, const uint8_t *a, size_t b, const uint8_t *c, size_t d, const uint8_t *e, size_t f) {
    (void)id; (void)a; (void)b; (void)c; (void)d; (void)e; (void)f;
    return 0;
}
int32_t iggy_sink_close(uint32_t id) { (void)id; return 0; }
const char *iggy_sink_version(void) { return "0.0.1"; }
`

// forkingSink compiles forkingSinkC writing into a fresh directory; it returns the library and
// that directory.
func forkingSink(t *testing.T) (lib, dump string) {
	t.Helper()
	dump = t.TempDir()
	lib = testkit.CompileC(t, forkingSinkC, "libiggy_connector_forking_sink", fmt.Sprintf(`-DDUMP_DIR=%q`, dump))
	return lib, dump
}

// readWhenThere reads a file the plugin writes, waiting until it exists.
func readWhenThere(t *testing.T, p *testkit.SupervisorProc, path string) string {
	t.Helper()
	var data []byte
	waitFor(t, p, waitLong, path, func() bool {
		var err error
		data, err = os.ReadFile(path)
		return err == nil
	})
	return string(data)
}

// processGone reports whether pid has exited (a zombie waiting for its reaper counts as gone).
func processGone(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// A spawned runner gets its connector in a private file, not in its environment: a 200 KB
// plugin_config starts and restarts (one variable is limited to 128 KiB); the runner drops the
// secret-bearing variables before the plugin runs, so neither the plugin nor a process it forks
// sees them; stopping the runner takes the forked process down with it.
func TestRunnerConfigHandover(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	lib, dump := forkingSink(t)
	big := strings.Repeat("s", 200_000)
	f.write(t, "connectors/fork.toml", sinkFile("fork", lib, "demo", "events", "")+"\n[plugin_config]\nschema = \""+big+"\"\n")
	p := testkit.StartSupervisor(t, f.dir, f.env("DB_PASSWORD=p1", "SERVICE_TOKEN=t1", "search_api_key=k1", "HARMLESS_SETTING=kept"), waitLong)

	if got := readWhenThere(t, p, filepath.Join(dump, "config.json")); !strings.Contains(got, big) {
		t.Fatalf("the plugin got %d bytes of config, without the 200 KB value", len(got))
	}
	for _, file := range []string{"plugin.env", "child.env"} {
		env := readWhenThere(t, p, filepath.Join(dump, file))
		if !strings.Contains(env, "HARMLESS_SETTING=kept\n") {
			t.Fatalf("%s lacks the harmless variable, so it says nothing:\n%s", file, env)
		}
		for _, line := range strings.Split(env, "\n") {
			name, _, _ := strings.Cut(line, "=")
			upper := strings.ToUpper(name)
			if strings.HasSuffix(upper, "_PASSWORD") || strings.HasSuffix(upper, "_TOKEN") || strings.HasSuffix(upper, "_API_KEY") ||
				name == "IGGY_CONNECTOR_CONFIG" || strings.Contains(line, big[:100]) {
				t.Errorf("%s carries %s", file, name)
			}
		}
	}
	// The file is gone once the runner read it; the socket directory is private.
	runnerEnv, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", statsOf(t, p, nil)["sink/fork"].PID))
	if err != nil {
		t.Fatal(err)
	}
	var handover string
	for _, kv := range strings.Split(string(runnerEnv), "\x00") {
		if v, ok := strings.CutPrefix(kv, "IGGY_CONNECTOR_CONFIG_PATH="); ok {
			handover = v
		}
	}
	if handover == "" {
		t.Fatal("the runner was not given IGGY_CONNECTOR_CONFIG_PATH")
	}
	if _, err := os.Stat(handover); !os.IsNotExist(err) {
		t.Errorf("the config file %s is still there after the start (%v)", handover, err)
	}
	if info, err := os.Stat(filepath.Dir(handover)); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %s: %v, %v; want mode 0700", filepath.Dir(handover), info.Mode(), err)
	}

	// Restarting the 200 KB version works.
	os.Remove(filepath.Join(dump, "config.json"))
	firstChild, _ := strconv.Atoi(readWhenThere(t, p, filepath.Join(dump, "child.pid")))
	os.Remove(filepath.Join(dump, "child.pid"))
	if resp, body, err := p.Do(http.MethodPost, "/sinks/fork/restart", nil, ""); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("restart: %v %v %s", resp, err, body)
	}
	if got := readWhenThere(t, p, filepath.Join(dump, "config.json")); !strings.Contains(got, big) {
		t.Fatalf("after the restart the plugin got %d bytes of config", len(got))
	}
	waitFor(t, p, waitLong, "the first runner's forked child to die with it", func() bool { return processGone(firstChild) })

	// Stopping the runner takes its plugin's child along.
	child, _ := strconv.Atoi(readWhenThere(t, p, filepath.Join(dump, "child.pid")))
	if processGone(child) {
		t.Fatalf("the forked child %d is not running", child)
	}
	if resp, body, err := p.Do(http.MethodPost, "/sinks/fork/stop", nil, ""); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("stop: %v %v %s", resp, err, body)
	}
	waitFor(t, p, waitLong, "the forked child to die with its runner", func() bool { return processGone(child) })
}

// A version whose document is over http.max_body_bytes is refused before the running runner is
// stopped: it keeps running, the answer names the key and the limit.
func TestOverLimitVersionRefusedBeforeStop(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, "max_body_bytes = 100000")
	f.write(t, "connectors/big.toml", sinkFile("big", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\nschema = \"small\"\n")
	// Version 1 is written by hand (the API would refuse it), version 0 active.
	v1 := strings.Replace(sinkFile("big", f.plugin("null_sink"), "demo", "events", ""), "version = 0", "version = 1", 1)
	f.write(t, "connectors/big_v1.toml", v1+"\n[plugin_config]\nschema = \""+strings.Repeat("s", 150_000)+"\"\n")
	f.write(t, "connectors/.active_versions.toml", "[sinks]\nbig = 0\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)
	pid := statsOf(t, p, nil)["sink/big"].PID
	runAPICases(t, p, []apiCase{
		{name: "activate", method: "PUT", path: "/sinks/big/configs/active", header: http.Header{"Content-Type": {"application/json"}}, body: `{"version":1}`, status: 204},
		{name: "restart refused", method: "POST", path: "/sinks/big/restart", status: 400, contentType: jsonType,
			bodyHas: []string{"key plugin_config", "larger than 100000 bytes (http.max_body_bytes"}},
	})
	if st := statsOf(t, p, nil)["sink/big"]; st.PID != pid || st.Status != "running" {
		t.Fatalf("after the refused restart: pid %d (was %d), status %s", st.PID, pid, st.Status)
	}
}

// Every secret of ours the supervisor hands a spawned runner travels in a private file, not the
// environment: the runner's /proc/<pid>/environ (the environment it was started with, which no
// unsetenv clears) holds neither the Iggy token nor the password, the fleet runner key, the API
// key, the config service's request-header values nor a credential in its base URL. The runner
// logs in with the token from the file, and a variable the operator set for plugins
// (AWS_SECRET_ACCESS_KEY) still reaches the plugin, as upstream.
func TestSpawnedRunnerEnvironHoldsNoSecretOfOurs(t *testing.T) {
	const token = "tok-secret-0123456789"
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}), testkit.WithToken(token))
	f := newFixture(t, broker)
	f.writeRuntime(t, "")
	lib, dump := forkingSink(t)
	f.write(t, "connectors/fork.toml", sinkFile("fork", lib, "demo", "events", ""))
	secrets := map[string]string{
		"IGGY_CONNECTORS_IGGY_TOKEN":                 token,
		"IGGY_CONNECTORS_IGGY_PASSWORD":              "pw-secret-456",
		"IGGY_CONNECTORS_FLEET_RUNNER_API_KEY":       "fleet-secret-789",
		"IGGY_CONNECTORS_HTTP_API_KEY":               "api-secret-012",
		"IGGY_CONNECTORS_CONNECTORS_REQUEST_HEADERS": `{"Authorization":"Bearer hdr-secret-345"}`,
		"IGGY_CONNECTORS_CONNECTORS_BASE_URL":        "https://u:base-secret-678@config.example/api",
	}
	env := f.env("AWS_SECRET_ACCESS_KEY=aws-for-the-plugin")
	for name, value := range secrets {
		env = append(env, name+"="+value)
	}
	p := testkit.StartSupervisor(t, f.dir, env, waitLong)
	key := http.Header{"Api-Key": {"api-secret-012"}}
	var pid int
	waitFor(t, p, waitLong, "the sink to run, logged in with the token", func() bool {
		st := statsOf(t, p, key)["sink/fork"]
		pid = st.PID
		return st.Status == "running" && pid > 0
	})
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(environ), "\x00") {
		for name, value := range secrets {
			for _, part := range []string{value, "hdr-secret-345", "base-secret-678"} {
				if strings.Contains(kv, part) && strings.Contains(value, part) {
					t.Errorf("the runner's environment carries %s's secret: %s", name, kv)
				}
			}
		}
	}
	if !strings.Contains(string(environ), "IGGY_CONNECTOR_SECRETS_PATH=") {
		t.Errorf("the runner was not handed its secrets file:\n%s", strings.ReplaceAll(string(environ), "\x00", "\n"))
	}
	if plugin := readWhenThere(t, p, filepath.Join(dump, "plugin.env")); !strings.Contains(plugin, "AWS_SECRET_ACCESS_KEY=aws-for-the-plugin\n") {
		t.Errorf("the operator's AWS_SECRET_ACCESS_KEY did not reach the plugin:\n%s", plugin)
	}
}
