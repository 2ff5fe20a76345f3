package provider_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/provider"
)

var ctx = context.Background()

// copyFixtures copies the upstream-style connectors directory into a fresh
// temp dir, so each test may change it.
func copyFixtures(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("testdata/connectors")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata/connectors", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, e.Name()), string(data))
	}
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot reads every file of dir, to prove a rejected change left it alone.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

type listed struct {
	kind    config.ConnectorKind
	key     string
	version uint64
}

func listOf(t *testing.T, p provider.Provider) []listed {
	t.Helper()
	cs, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []listed
	for _, c := range cs {
		out = append(out, listed{c.Kind, c.Key, c.Version})
	}
	return out
}

func TestLocalLoadsUpstreamDirectory(t *testing.T) {
	p, err := provider.NewLocal(copyFixtures(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []listed{
		{config.KindSink, "orders_archive", 3},
		{config.KindSink, "stdout", 0},
		{config.KindSource, "random", 1}, // highest of v0 and v1
		{config.KindSource, "sensor_feed", 1},
	}
	if got := listOf(t, p); !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	versions, err := p.Versions(ctx, config.KindSource, "random")
	if err != nil || len(versions) != 2 || versions[0].Version != 0 || versions[1].Version != 1 {
		t.Fatalf("Versions = %v, %v", versions, err)
	}
	none, err := p.Versions(ctx, config.KindSink, "random")
	if err != nil || len(none) != 0 {
		t.Fatalf("sinks and sources must be separate namespaces: %v, %v", none, err)
	}
}

func TestLocalScanSkipsWhatUpstreamSkips(t *testing.T) {
	dir := copyFixtures(t)
	write(t, filepath.Join(dir, ".hidden.toml"), "not toml at all")
	write(t, filepath.Join(dir, "Cargo.toml"), "[package]\nname = \"x\"")
	write(t, filepath.Join(dir, "notes.TOML"), "garbage")
	write(t, filepath.Join(dir, "readme.md"), "garbage")
	if err := os.Mkdir(filepath.Join(dir, "nested.toml"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "nested.toml", "inner.toml"), "garbage")
	p, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(listOf(t, p)); got != 4 {
		t.Fatalf("listed %d connectors, want 4", got)
	}
}

func TestLocalDirectorySetup(t *testing.T) {
	if _, err := provider.NewLocal("", nil, nil); !errors.Is(err, provider.ErrInvalid) || !strings.Contains(err.Error(), "not provided") {
		t.Fatalf("empty dir: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "a", "b")
	p, err := provider.NewLocal(missing, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(missing); err != nil || !info.IsDir() {
		t.Fatalf("missing directory not created: %v", err)
	}
	if got := listOf(t, p); len(got) != 0 {
		t.Fatalf("new directory lists %v", got)
	}
}

// Every file is read: the good ones load, each bad one is reported by Broken with its file, a
// safe key (the document's, else from the file name) and a kind (the document's, else from the
// file name); a fixed file loads on the next call, a removed one is forgotten.
func TestLocalReportsBrokenFilesAndLoadsTheRest(t *testing.T) {
	sink := minimalSink("KEYX", 0)
	cases := []struct {
		file, content string
		kind          config.ConnectorKind
		key           string
		errorHas      []string
	}{
		{"lots.toml", strings.Replace(sink, "KEYX", "lots", 1) + "batch_length = \"lots\"\n", config.KindSink, "lots", []string{"lots.toml", "streams[0].batch_length"}},
		{"maybe.toml", strings.Replace(strings.Replace(sink, "KEYX", "maybe", 1), "enabled = true", `enabled = "maybe"`, 1), config.KindSink, "maybe", []string{"maybe.toml", "key enabled"}},
		{"nopath.toml", strings.Replace(strings.Replace(sink, "KEYX", "nopath", 1), "path = \"p\"\n", "", 1), config.KindSink, "nopath", []string{"nopath.toml", "key path"}},
		{"nostreams_source.toml", "type = \"source\"\nkey = \"nostreams\"\nenabled = true\nversion = 0\nname = \"n\"\npath = \"p\"\n", config.KindSource, "nostreams", []string{"nostreams_source.toml", "key streams"}},
		{"evil.toml", strings.Replace(sink, "KEYX", "../../tmp/evil", 1), config.KindSink, "evil", []string{"evil.toml", "../../tmp/evil"}},
		{"syntax_source.toml", "type = \nkey = \"syn\"\n", config.KindSource, "syn", []string{"syntax_source.toml", "parsing TOML"}},
		{"sink_created_3.toml", "not toml at all", config.KindSink, "created", []string{"sink_created_3.toml", "parsing TOML"}},
		{"yaml.toml", strings.Replace(strings.Replace(sink, "KEYX", "yaml", 1), `"json"`, `"yaml"`, 1), config.KindSink, "yaml", []string{"yaml.toml", "streams[0].schema"}},
		{"sometimes.toml", strings.Replace(sink, "KEYX", "sometimes", 1) + "offset_commit = \"sometimes\"\n", config.KindSink, "sometimes", []string{"sometimes.toml", "streams[0].offset_commit"}},
	}
	dir := copyFixtures(t)
	for _, c := range cases {
		write(t, filepath.Join(dir, c.file), c.content)
	}
	p, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatalf("NewLocal with bad files beside good ones: %v", err)
	}
	if got := len(listOf(t, p)); got != 4 {
		t.Fatalf("listed %d connectors, want the 4 good ones", got)
	}
	broken := map[string]provider.Broken{}
	for _, b := range p.Broken(ctx) {
		broken[filepath.Base(b.Source)] = b
	}
	if len(broken) != len(cases) {
		t.Fatalf("Broken has %d files, want %d: %+v", len(broken), len(cases), broken)
	}
	for _, c := range cases {
		b := broken[c.file]
		if b.Kind != c.kind || b.Key != c.key || !errors.Is(b.Err, provider.ErrInvalid) {
			t.Errorf("%s: %s %q (%v), want %s %q with ErrInvalid", c.file, b.Kind, b.Key, b.Err, c.kind, c.key)
			continue
		}
		for _, part := range c.errorHas {
			if !strings.Contains(b.Err.Error(), part) {
				t.Errorf("%s: error %q does not mention %q", c.file, b.Err, part)
			}
		}
	}
	// The key of a bad file answers with its error until the file is fixed; then it loads.
	if _, err := p.Get(ctx, config.KindSink, "lots"); !errors.Is(err, provider.ErrInvalid) || !strings.Contains(err.Error(), "batch_length") {
		t.Fatalf("Get of a broken key: %v, want its load error", err)
	}
	write(t, filepath.Join(dir, "lots.toml"), strings.Replace(sink, "KEYX", "lots", 1))
	if c, err := p.Get(ctx, config.KindSink, "lots"); err != nil || c.Key != "lots" {
		t.Fatalf("Get after fixing the file: %+v, %v", c, err)
	}
	if err := os.Remove(filepath.Join(dir, "maybe.toml")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get(ctx, config.KindSink, "maybe"); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("Get of a removed broken file's key: %v, want ErrNotFound", err)
	}
	if got, want := len(p.Broken(ctx)), len(cases)-2; got != want {
		t.Errorf("Broken after one fix and one removal: %d, want %d", got, want)
	}
	if got := len(listOf(t, p)); got != 5 {
		t.Errorf("listed %d connectors after the fix, want 5", got)
	}
}

func minimalSink(key string, version int) string {
	return strings.NewReplacer("KEY", key, "VERSION", string(rune('0'+version))).Replace(`type = "sink"
key = "KEY"
enabled = true
version = VERSION
name = "n"
path = "p"
[[streams]]
stream = "s"
topics = ["t"]
schema = "json"
`)
}

func TestLocalDuplicateVersionWarns(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.toml"), minimalSink("dup", 1))
	write(t, filepath.Join(dir, "b.toml"), minimalSink("dup", 1))
	var logs bytes.Buffer
	p, err := provider.NewLocal(dir, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "duplicate connector version") {
		t.Fatalf("no warning logged: %q", logs.String())
	}
	if got := listOf(t, p); len(got) != 1 {
		t.Fatalf("List = %v, want one entry", got)
	}
}

func TestLocalActivePointer(t *testing.T) {
	tests := []struct {
		name    string
		pointer string
		want    []listed
	}{
		{"pointer picks an older version", "[sources]\nrandom = 0\n", []listed{
			{config.KindSink, "orders_archive", 3}, {config.KindSink, "stdout", 0},
			{config.KindSource, "random", 0}, {config.KindSource, "sensor_feed", 1}}},
		{"pointer to a missing version omits the connector", "[sinks]\nstdout = 7\n", []listed{
			{config.KindSink, "orders_archive", 3},
			{config.KindSource, "random", 1}, {config.KindSource, "sensor_feed", 1}}},
		{"malformed pointer file counts as empty", "[sinks\n", []listed{
			{config.KindSink, "orders_archive", 3}, {config.KindSink, "stdout", 0},
			{config.KindSource, "random", 1}, {config.KindSource, "sensor_feed", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyFixtures(t)
			p, err := provider.NewLocal(dir, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Written after the scan: the pointer file is re-read on every call.
			write(t, filepath.Join(dir, provider.ActiveVersionsFile), tt.pointer)
			if got := listOf(t, p); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("List = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLocalGetUsesActiveVersion(t *testing.T) {
	dir := copyFixtures(t)
	p, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetActive(ctx, config.KindSource, "random", 0); err != nil {
		t.Fatal(err)
	}
	c, err := p.Get(ctx, config.KindSource, "random")
	if err != nil || c.Version != 0 {
		t.Fatalf("Get after SetActive(0) = v%d, %v", c.Version, err)
	}
	var nf *provider.NotFoundError
	_, err = p.Get(ctx, config.KindSink, "nope")
	if !errors.As(err, &nf) || !errors.Is(err, provider.ErrNotFound) || err.Error() != "Sink config not found with key: nope, version: 0" {
		t.Fatalf("Get of a missing key = %v", err)
	}
	if _, err := p.GetVersion(ctx, config.KindSource, "random", 5); !errors.Is(err, provider.ErrNotFound) ||
		err.Error() != "Source config not found with key: random, version: 5" {
		t.Fatalf("GetVersion of a missing version = %v", err)
	}
	if err := p.SetActive(ctx, config.KindSource, "random", 5); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("SetActive of a missing version = %v", err)
	}
	if _, err := p.Get(ctx, config.KindSink, "../x"); !errors.Is(err, provider.ErrInvalid) {
		t.Fatalf("Get with a bad key = %v", err)
	}
}

func TestLocalCreateStoresNextVersion(t *testing.T) {
	dir := copyFixtures(t)
	p, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, err := p.Get(ctx, config.KindSource, "random")
	if err != nil {
		t.Fatal(err)
	}
	base.Name = "Random source, third edition"
	created, err := p.Create(ctx, config.KindSource, "random", base)
	if err != nil {
		t.Fatal(err)
	}
	if created.Version != 2 || created.Name != base.Name {
		t.Fatalf("created %+v", created)
	}
	if info, err := os.Stat(filepath.Join(dir, "source_random_2.toml")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("file not written private (0600): %v, %v", info, err)
	}
	if err := p.SetActive(ctx, config.KindSource, "random", 2); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, provider.ActiveVersionsFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("pointer file not written private (0600): %v, %v", info, err)
	}
	// Not activated: no pointer, so the highest version is active anyway;
	// a fresh key starts at 0.
	fresh, err := p.Create(ctx, config.KindSink, "new_sink", base.Clone())
	if !errors.Is(err, provider.ErrInvalid) {
		t.Fatalf("a source config stored as a sink: %+v, %v", fresh, err)
	}
	sink, err := p.Get(ctx, config.KindSink, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err = p.Create(ctx, config.KindSink, "new_sink", sink)
	if err != nil || fresh.Version != 0 || fresh.Key != "new_sink" {
		t.Fatalf("fresh key: %+v, %v", fresh, err)
	}
	// A new process sees the same configs.
	reopened, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []config.Connector{created, fresh} {
		got, err := reopened.GetVersion(ctx, want.Kind, want.Key, want.Version)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("reloaded %s %s v%d:\n got %+v\nwant %+v", want.Kind, want.Key, want.Version, got, want)
		}
	}
}

func TestLocalCreateNeverOverwritesAnotherFile(t *testing.T) {
	dir := t.TempDir()
	// File names are not identities: this file holds key "other".
	write(t, filepath.Join(dir, "sink_stdout_0.toml"), minimalSink("other", 5))
	p, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.ParseConnector("x", []byte(minimalSink("stdout", 0)), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(ctx, config.KindSink, "stdout", c); err != nil {
		t.Fatal(err)
	}
	if got, err := p.GetVersion(ctx, config.KindSink, "other", 5); err != nil || got.Key != "other" {
		t.Fatalf("other connector lost: %v", err)
	}
	reopened, err := provider.NewLocal(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := listOf(t, reopened); len(got) != 2 {
		t.Fatalf("after reopen List = %v, want both connectors", got)
	}
}

func TestLocalRejectedCreateLeavesNoTrace(t *testing.T) {
	good, err := config.ParseConnector("x", []byte(minimalSink("fresh", 0)), "toml")
	if err != nil {
		t.Fatal(err)
	}
	withNull := good.Clone()
	withNull.PluginConfig = map[string]any{"a": nil}
	emptyKeyMix := good.Clone() // TOML would read [0, {"" = 1}] back as [{"" = 1}]
	emptyKeyMix.PluginConfig = map[string]any{"list": []any{int64(0), map[string]any{"": int64(1)}}}
	badSchema := good.Clone()
	badSchema.Streams[0].Schema = "yaml"
	badInterval := good.Clone()
	badInterval.Streams[0].Declared.PollInterval = ptr("soon")
	tests := []struct {
		name string
		key  string
		c    config.Connector
		env  []string
	}{
		{"null in plugin_config", "fresh", withNull, nil},
		{"array TOML would change", "fresh", emptyKeyMix, nil},
		{"unknown schema", "fresh", badSchema, nil},
		{"bad poll interval", "fresh", badInterval, nil},
		{"bad key", "a/b", good, nil},
		{"env override breaks it", "fresh", good, []string{"IGGY_CONNECTORS_SINK_FRESH_ENABLED=perhaps"}},
		{"env override renames it", "fresh", good, []string{"IGGY_CONNECTORS_SINK_FRESH_KEY=other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyFixtures(t)
			p, err := provider.NewLocal(dir, tt.env, nil)
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			listBefore := listOf(t, p)
			_, err = p.Create(ctx, config.KindSink, tt.key, tt.c)
			if !errors.Is(err, provider.ErrInvalid) {
				t.Fatalf("Create error = %v, want ErrInvalid", err)
			}
			if after := snapshot(t, dir); !reflect.DeepEqual(after, before) {
				t.Fatalf("directory changed by a rejected create")
			}
			if got := listOf(t, p); !reflect.DeepEqual(got, listBefore) {
				t.Fatalf("provider state changed: %v", got)
			}
		})
	}
}

func TestLocalDelete(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	tests := []struct {
		name        string
		pointer     string
		kind        config.ConnectorKind
		key         string
		version     *uint64
		wantErr     error
		wantPointer string
		wantList    []listed
		gone        string
	}{
		{"explicit version, pointer moves to highest left", "[sources]\nrandom = 1\n", config.KindSource, "random", u(1), nil,
			"random = 0", []listed{{config.KindSink, "orders_archive", 3}, {config.KindSink, "stdout", 0}, {config.KindSource, "random", 0}, {config.KindSource, "sensor_feed", 1}},
			"random_source_v1.toml"},
		{"no version deletes the pointer's", "[sources]\nrandom = 0\n", config.KindSource, "random", nil, nil,
			"random = 1", []listed{{config.KindSink, "orders_archive", 3}, {config.KindSink, "stdout", 0}, {config.KindSource, "random", 1}, {config.KindSource, "sensor_feed", 1}},
			"random_source_v0.toml"},
		{"last version drops the pointer", "[sinks]\nstdout = 0\n", config.KindSink, "stdout", u(0), nil,
			"[sinks]\n", []listed{{config.KindSink, "orders_archive", 3}, {config.KindSource, "random", 1}, {config.KindSource, "sensor_feed", 1}},
			"stdout_sink.toml"},
		{"no version and no pointer is not found", "", config.KindSource, "random", nil, provider.ErrNotFound, "", nil, ""},
		{"unknown version is not found", "", config.KindSource, "random", u(9), provider.ErrNotFound, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyFixtures(t)
			if tt.pointer != "" {
				write(t, filepath.Join(dir, provider.ActiveVersionsFile), tt.pointer)
			}
			p, err := provider.NewLocal(dir, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			err = p.Delete(ctx, tt.kind, tt.key, tt.version)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Delete = %v, want %v", err, tt.wantErr)
				}
				if !reflect.DeepEqual(snapshot(t, dir), before) {
					t.Fatal("a failed delete changed the directory")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, tt.gone)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s still exists", tt.gone)
			}
			pointer, _ := os.ReadFile(filepath.Join(dir, provider.ActiveVersionsFile))
			if !strings.Contains(string(pointer), tt.wantPointer) {
				t.Fatalf("pointer file %q lacks %q", pointer, tt.wantPointer)
			}
			if got := listOf(t, p); !reflect.DeepEqual(got, tt.wantList) {
				t.Fatalf("List = %v, want %v", got, tt.wantList)
			}
		})
	}
}

func TestLocalAppliesConnectorEnvOverrides(t *testing.T) {
	env := []string{
		"IGGY_CONNECTORS_SINK_STDOUT_ENABLED=false",
		"IGGY_CONNECTORS_SINK_STDOUT_PLUGIN_CONFIG_PRINT_PAYLOAD=false",
		"IGGY_CONNECTORS_SOURCE_RANDOM_PLUGIN_CONFIG_MAX_COUNT=5", // every version of the key
	}
	p, err := provider.NewLocal(copyFixtures(t), env, nil)
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := p.Get(ctx, config.KindSink, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	if stdout.Enabled || stdout.PluginConfig["print_payload"] != false {
		t.Fatalf("stdout overrides not applied: %+v", stdout)
	}
	versions, err := p.Versions(ctx, config.KindSource, "random")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		if v.PluginConfig["max_count"] != int64(5) {
			t.Fatalf("random v%d max_count = %v", v.Version, v.PluginConfig["max_count"])
		}
	}
}

func TestNewSelectsProvider(t *testing.T) {
	rt := config.DefaultRuntime()
	rt.Connectors.ConfigDir = t.TempDir()
	p, err := provider.New(rt, nil, nil)
	if _, ok := p.(*provider.Local); !ok || err != nil {
		t.Fatalf("local: %T, %v", p, err)
	}
	rt.Connectors.ConfigType = config.ProviderHTTP
	rt.Connectors.BaseURL = "http://127.0.0.1:1"
	p, err = provider.New(rt, nil, nil)
	if _, ok := p.(*provider.HTTP); !ok || err != nil {
		t.Fatalf("http: %T, %v", p, err)
	}
	rt.Connectors.ConfigType = "ftp"
	if _, err := provider.New(rt, nil, nil); !errors.Is(err, provider.ErrInvalid) {
		t.Fatalf("unknown type: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// As upstream, a created version is kept as posted: the connector's env overrides apply to files
// the provider loads, so they show only once the directory is scanned again.
func TestLocalCreateKeepsThePostedConfigWithoutEnvOverrides(t *testing.T) {
	dir := copyFixtures(t)
	env := []string{"IGGY_CONNECTORS_SINK_STDOUT_PLUGIN_CONFIG_PRINT_PAYLOAD=false", "IGGY_CONNECTORS_SINK_STDOUT_VERBOSE=true"}
	p, err := provider.NewLocal(dir, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, err := p.Get(ctx, config.KindSink, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	base.PluginConfig, base.Verbose = nil, false
	created, err := p.Create(ctx, config.KindSink, "stdout", base)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := p.GetVersion(ctx, config.KindSink, "stdout", created.Version)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]config.Connector{"created": created, "stored": stored} {
		if c.PluginConfig != nil || c.Verbose {
			t.Errorf("%s version: plugin_config %v, verbose %v; want nil and false (no env overrides)", name, c.PluginConfig, c.Verbose)
		}
	}
	reopened, err := provider.NewLocal(dir, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := reopened.GetVersion(ctx, config.KindSink, "stdout", created.Version)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.PluginConfig["print_payload"] != false || !loaded.Verbose {
		t.Errorf("rescanned version: plugin_config %v, verbose %v; want the env overrides applied", loaded.PluginConfig, loaded.Verbose)
	}
}
