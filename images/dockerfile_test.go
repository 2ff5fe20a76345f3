package images_test

import (
	"bytes"
	"errors"
	"fmt"
	"go/version"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	"golang.org/x/mod/modfile"
)

// dockerfile is a Dockerfile parsed by buildkit's parser, cut into its stages.
type dockerfile struct {
	rel    string            // path from the repository root, the build context
	args   map[string]string // ARG defaults declared before the first FROM
	stages []*stage
}

type stage struct {
	name   string
	base   string // FROM image, ARGs expanded
	parent *stage // set when base names an earlier stage
	nodes  []*parser.Node
	line   int
}

func parseDockerfile(root, rel string) (*dockerfile, error) {
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	return parseDockerfileBytes(rel, data)
}

func parseDockerfileBytes(rel string, data []byte) (*dockerfile, error) {
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	d := &dockerfile{rel: rel, args: map[string]string{}}
	var cur *stage
	for _, n := range res.AST.Children {
		n.Value = strings.ToLower(n.Value) // the instruction keyword, as written
		switch {
		case n.Value == "arg" && cur == nil:
			for a := n.Next; a != nil; a = a.Next {
				name, def, _ := strings.Cut(a.Value, "=")
				d.args[name] = strings.Trim(def, `"`)
			}
		case n.Value == "from":
			words := nodeWords(n)
			if len(words) == 0 {
				return nil, fmt.Errorf("%s:%d: FROM without an image", rel, n.StartLine)
			}
			cur = &stage{base: os.Expand(words[0], func(k string) string { return d.args[k] }), line: n.StartLine}
			if len(words) == 3 && strings.EqualFold(words[1], "as") {
				cur.name = words[2]
			}
			cur.parent = d.stage(cur.base)
			d.stages = append(d.stages, cur)
		case cur == nil:
			return nil, fmt.Errorf("%s:%d: %s before the first FROM", rel, n.StartLine, strings.ToUpper(n.Value))
		default:
			cur.nodes = append(cur.nodes, n)
		}
	}
	if len(d.stages) == 0 {
		return nil, fmt.Errorf("%s: no FROM", rel)
	}
	return d, nil
}

func (d *dockerfile) stage(name string) *stage {
	for _, s := range d.stages {
		if s.name != "" && s.name == name {
			return s
		}
	}
	return nil
}

// target returns the named stage, or the last one (docker build's default) for "".
func (d *dockerfile) target(name string) (*stage, error) {
	if name == "" {
		return d.stages[len(d.stages)-1], nil
	}
	if s := d.stage(name); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%s: no stage %q", d.rel, name)
}

// chain lists a stage's ancestry, the first FROM image's stage first.
func (s *stage) chain() []*stage {
	var out []*stage
	for cur := s; cur != nil; cur = cur.parent {
		out = append([]*stage{cur}, out...)
	}
	return out
}

// instructions lists the instructions named kind ("env", "copy", ...) of a stage and its ancestors.
func (s *stage) instructions(kind string) []*parser.Node {
	var out []*parser.Node
	for _, st := range s.chain() {
		for _, n := range st.nodes {
			if n.Value == kind {
				out = append(out, n)
			}
		}
	}
	return out
}

// last returns the stage's effective instruction of kind (the last one in the ancestry).
func (s *stage) last(kind string) *parser.Node {
	all := s.instructions(kind)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

// env returns the ENV variables a container of this stage starts with.
func (s *stage) env() map[string]string {
	env := map[string]string{}
	for _, n := range s.instructions("env") {
		// buildkit chains ENV as name, value, separator triples.
		for kv := n.Next; kv != nil && kv.Next != nil; kv = kv.Next.Next.Next {
			env[kv.Value] = strings.Trim(kv.Next.Value, `"`)
			if kv.Next.Next == nil {
				break
			}
		}
	}
	return env
}

// copyTo finds the COPY whose destination is dest; it returns its sources and --from stage.
func (s *stage) copyTo(dest string) (sources []string, from string, ok bool) {
	for _, n := range s.instructions("copy") {
		words := nodeWords(n)
		if len(words) < 2 {
			continue
		}
		to := words[len(words)-1]
		srcs := words[:len(words)-1]
		for _, src := range srcs {
			if to == dest || (strings.HasSuffix(to, "/") && path.Join(to, path.Base(src)) == dest) {
				return srcs, flagValue(n, "from"), true
			}
		}
	}
	return nil, "", false
}

func nodeWords(n *parser.Node) []string {
	var out []string
	for a := n.Next; a != nil; a = a.Next {
		out = append(out, a.Value)
	}
	return out
}

func flagValue(n *parser.Node, name string) string {
	for _, f := range n.Flags {
		if v, ok := strings.CutPrefix(f, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// imageSpec is one of our Dockerfiles: which binary it runs, the stages users pick.
type imageSpec struct {
	dockerfile string
	role       role
	binaries   []string // built by the build stage, from cmd/<name>
	targets    []string // final stages (the last one is the default)
	examples   string   // the target that adds the example plugins
	workDir    string   // the runtime stages' WORKDIR
}

var imageSpecs = []imageSpec{
	{"images/runner/Dockerfile", roleRunner, []string{"iggy-connector-runner"}, []string{"runner-with-examples", "runner"}, "runner-with-examples", runtimeWorkDir},
	{"images/supervisor/Dockerfile", roleSupervisor, []string{"iggy-connectors", "iggy-connector-runner"}, []string{"supervisor-with-examples", "supervisor"}, "supervisor-with-examples", upstreamWorkDir},
}

const (
	pluginDir      = "/opt/iggy/connectors"
	runtimeWorkDir = "/var/lib/iggy-connectors"
	// upstreamWorkDir is the WORKDIR of upstream's image (core/connectors/runtime/Dockerfile),
	// which the drop-in supervisor image keeps so relative paths resolve the same.
	upstreamWorkDir = "/app"
)

// imageContainer is a container of one image target before a deployment file adds to it.
func imageContainer(root string, spec imageSpec, target string, examplePluginFiles []string) (container, error) {
	d, err := parseDockerfile(root, spec.dockerfile)
	if err != nil {
		return container{}, err
	}
	st, err := d.target(target)
	if err != nil {
		return container{}, err
	}
	c := container{origin: spec.dockerfile + " target " + st.name, role: spec.role, env: st.env(), mounts: map[string]string{}}
	if _, from, ok := st.copyTo(pluginDir + "/"); ok && from != "" {
		c.pluginDir = pluginDir
		c.plugins = examplePluginFiles
	}
	return c, nil
}

// checkDockerfile checks one of our Dockerfiles; every problem is returned.
func checkDockerfile(root string, d *dockerfile, spec imageSpec, goVersion string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(d.rel+": "+format, args...))
	}

	// Build arguments: the Go image satisfies go.mod, the runtime base has glibc.
	goImage := d.args["GO_VERSION"]
	if goImage == "" {
		bad("no ARG GO_VERSION with a default")
	} else if v := "go" + goImage; !version.IsValid(v) || version.Lang(v) != version.Lang("go"+goVersion) || version.Compare(v, "go"+goVersion) < 0 {
		bad("ARG GO_VERSION=%s does not satisfy go.mod's go %s", goImage, goVersion)
	}
	for _, s := range d.stages {
		if strings.HasPrefix(s.base, "golang:") && !strings.HasPrefix(s.base, "golang:"+goImage+"-") {
			bad("stage %q: FROM %s is not the GO_VERSION image", s.name, s.base)
		}
	}

	// Each binary is built without cgo (purego needs no cgo) from an existing command.
	build := d.stage("build")
	if build == nil {
		bad("no build stage")
	} else {
		runs := strings.Join(instructionTexts(build, "run"), "\n")
		for _, bin := range spec.binaries {
			if !fileExists(filepath.Join(root, "cmd", bin, "main.go")) {
				bad("binary %s: no cmd/%s", bin, bin)
			}
			if !regexp.MustCompile(`CGO_ENABLED=0 go build [^\n]*\./cmd/` + bin + `\b`).MatchString(runs) {
				bad("build stage does not build ./cmd/%s with CGO_ENABLED=0", bin)
			}
		}
	}

	// Every COPY source from the context exists and the Dockerfile's .dockerignore keeps it.
	ignored, err := dockerignore(root, d.rel)
	if err != nil {
		bad("%v", err)
	}
	for _, s := range d.stages {
		for _, n := range s.nodes {
			if (n.Value != "copy" && n.Value != "add") || flagValue(n, "from") != "" {
				continue
			}
			words := nodeWords(n)
			for _, src := range words[:len(words)-1] {
				if !fileExists(filepath.Join(root, src)) {
					bad("line %d: COPY %s: %v", n.StartLine, src, errMissingFile)
				} else if ignored != nil && excluded(ignored, root, src) {
					bad("line %d: COPY %s: excluded by %s.dockerignore", n.StartLine, src, d.rel)
				}
			}
		}
	}

	// The example plugins stage builds what the Makefile builds, where the final stage copies from.
	if st := d.stage(spec.examples); st == nil {
		bad("no %s stage", spec.examples)
	} else if srcs, from, ok := st.copyTo(pluginDir + "/"); !ok || from == "" {
		bad("stage %s: no COPY --from=<stage> into %s/", spec.examples, pluginDir)
	} else if plugins := d.stage(from); plugins == nil {
		bad("stage %s copies from unknown stage %q", spec.examples, from)
	} else if !slices.Contains(instructionTexts(plugins, "run"), "make plugins") {
		bad("stage %s does not run `make plugins`", from)
	} else if w := plugins.last("workdir"); w == nil || path.Join(nodeWords(w)[0], "bin/plugins")+"/" != srcs[0] {
		bad("stage %s: COPY --from=%s %s is not the Makefile's bin/plugins/ under the WORKDIR", spec.examples, from, srcs[0])
	}

	for i, name := range spec.targets {
		st, err := d.target(name)
		if err != nil {
			bad("%v", err)
			continue
		}
		if i == len(spec.targets)-1 && st != d.stages[len(d.stages)-1] {
			bad("the default (last) stage is %q, want %q", d.stages[len(d.stages)-1].name, name)
		}
		errs = append(errs, checkRuntimeStage(d, st, spec)...)
	}
	return errs
}

// checkRuntimeStage checks a stage users run: glibc base, non-root user, entrypoint, health check,
// exposed port, and environment variables the program reads.
func checkRuntimeStage(d *dockerfile, st *stage, spec imageSpec) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s target %s: "+format, append([]any{d.rel, st.name}, args...)...))
	}
	base := st.chain()[0].base
	if !regexp.MustCompile(`^(debian:[a-z]+-slim|gcr\.io/distroless/base(-nossl)?-debian\d+)(:|$)`).MatchString(base) {
		bad("runtime base %q: want debian:<release>-slim or distroless/base (plugins need glibc and dlopen)", base)
	}
	if u := st.last("user"); u == nil {
		bad("no USER: the image would run as root")
	} else if user, _, _ := strings.Cut(nodeWords(u)[0], ":"); user == "root" || user == "0" {
		bad("USER %s: want a non-root user", user)
	}
	if e := st.last("entrypoint"); e == nil || nodeWords(e)[0] != spec.binaries[0] {
		bad("ENTRYPOINT is not [%q]", spec.binaries[0])
	}
	for _, bin := range spec.binaries {
		if _, from, ok := st.copyTo("/usr/local/bin/" + bin); !ok || from != "build" {
			bad("%s is not copied from the build stage to /usr/local/bin", bin)
		}
	}
	env := st.env()
	c := container{origin: d.rel + " target " + st.name, role: spec.role, env: env, mounts: map[string]string{}}
	errs = append(errs, checkEnv(c, nil, true)...)

	h := st.last("healthcheck")
	if h == nil || h.Next == nil || !strings.EqualFold(h.Next.Value, "CMD") {
		bad("no HEALTHCHECK CMD")
	} else {
		probe := nodeWords(h.Next)
		if !strings.HasPrefix(probe[0], "/") {
			probe[0] = "/usr/local/bin/" + probe[0]
		}
		if srcs, from, ok := st.copyTo(probe[0]); !ok || from != "" || srcs[0] != "images/healthcheck.sh" {
			bad("HEALTHCHECK runs %s, which is not images/healthcheck.sh copied into the image", probe[0])
		}
	}
	address := env["IGGY_CONNECTORS_HTTP_ADDRESS"]
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		bad("ENV IGGY_CONNECTORS_HTTP_ADDRESS=%q: %v", address, err)
	}
	if x := st.last("expose"); x == nil || strings.TrimSuffix(nodeWords(x)[0], "/tcp") != port {
		bad("EXPOSE does not match the port of IGGY_CONNECTORS_HTTP_ADDRESS=%q", address)
	}
	if w := st.last("workdir"); w == nil || nodeWords(w)[0] != spec.workDir {
		bad("WORKDIR is not %s", spec.workDir)
	} else if runs := strings.Join(instructionTexts(st, "run"), "\n"); !regexp.MustCompile(`install -d -o iggy -g iggy [^\n]*` + regexp.QuoteMeta(spec.workDir) + `( |$)`).MatchString(runs) {
		bad("WORKDIR %s is not created owned by the image's user iggy", spec.workDir)
	}
	return errs
}

// checkImageDefaults runs a container of each target as the image alone defines it: its ENV and
// built-in files must load as a runtime configuration whose HTTP port is the EXPOSEd one, and the
// directories the configuration names must be created in the image.
func checkImageDefaults(root string, d *dockerfile, spec imageSpec) []error {
	plugins, err := examplePlugins(root)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, target := range spec.targets {
		c, err := imageContainer(root, spec, target, plugins)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st, _ := d.target(target)
		for _, x := range st.instructions("expose") {
			var port int
			fmt.Sscan(strings.TrimSuffix(nodeWords(x)[0], "/tcp"), &port)
			c.publishedPorts = append(c.publishedPorts, port)
		}
		if h := st.last("healthcheck"); h != nil && h.Next != nil {
			c.healthChecks = append(c.healthChecks, parseHealthCommand(nodeWords(h.Next)))
		}
		rt, err := effectiveRuntime(c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, checkHTTP(c, rt)...)
		runs := strings.Join(instructionTexts(st, "run"), "\n")
		dirs := []string{rt.State.Path}
		if spec.role == roleSupervisor {
			dirs = append(dirs, rt.Connectors.ConfigDir)
		}
		for _, dir := range dirs {
			if !strings.HasPrefix(dir, "/") || !strings.Contains(runs, " "+dir) {
				errs = append(errs, fmt.Errorf("%s: directory %q of the default configuration is not created in the image", c.origin, dir))
			}
		}
	}
	return errs
}

func instructionTexts(s *stage, kind string) []string {
	var out []string
	for _, n := range s.instructions(kind) {
		out = append(out, strings.Join(nodeWords(n), " "))
	}
	return out
}

// dockerignore reads <Dockerfile>.dockerignore, which BuildKit prefers to the context's .dockerignore.
func dockerignore(root, rel string) (*patternmatcher.PatternMatcher, error) {
	f, err := os.Open(filepath.Join(root, rel+".dockerignore"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s.dockerignore: %w", rel, err)
	}
	return patternmatcher.New(patterns)
}

// excluded reports whether src, or any file under it, is left out of the build context.
func excluded(pm *patternmatcher.PatternMatcher, root, src string) bool {
	found := false
	_ = filepath.WalkDir(filepath.Join(root, src), func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || found {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.HasSuffix(rel, "_test.go") || strings.Contains(rel, "/testdata/") {
			return nil // deliberately left out: the image builds no tests
		}
		if m, _ := pm.MatchesOrParentMatches(filepath.ToSlash(rel)); m {
			found = true
		}
		return nil
	})
	return found
}

func goModVersion(t testing.TB, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.Go.Version
}

func TestDockerfiles(t *testing.T) {
	root := repoRoot(t)
	goVersion := goModVersion(t, root)
	if _, err := examplePlugins(root); err != nil {
		t.Errorf("the example plugins the images build: %v", err)
	}
	for _, spec := range imageSpecs {
		t.Run(spec.dockerfile, func(t *testing.T) {
			d, err := parseDockerfile(root, spec.dockerfile)
			if err != nil {
				t.Fatal(err)
			}
			reportErrors(t, checkDockerfile(root, d, spec, goVersion))
			reportErrors(t, checkImageDefaults(root, d, spec))
		})
	}
}

// TestDockerfileCheckerRejects feeds broken Dockerfiles to the checker: each must be reported.
func TestDockerfileCheckerRejects(t *testing.T) {
	root := repoRoot(t)
	goVersion := goModVersion(t, root)
	good, err := os.ReadFile(filepath.Join(root, imageSpecs[0].dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"root user", "USER iggy:iggy", "USER root", "non-root"},
		{"old Go", "ARG GO_VERSION=" + goVersion, "ARG GO_VERSION=1.22.0", "does not satisfy go.mod"},
		{"static base", "FROM debian:${DEBIAN_RELEASE}-slim AS runtime", "FROM scratch AS runtime", "glibc"},
		{"missing COPY source", "COPY runner ./runner", "COPY runnr ./runner", "does not exist"},
		{"cgo build", "CGO_ENABLED=0 go build", "go build", "CGO_ENABLED=0"},
		{"unknown ENV", "IGGY_CONNECTORS_STATE_PATH=", "IGGY_CONNECTORS_STATE_DIR=", "IGGY_CONNECTORS_STATE_DIR"},
		{"EXPOSE mismatch", "EXPOSE 8081", "EXPOSE 9090", "EXPOSE does not match"},
		{"other WORKDIR", "WORKDIR /var/lib/iggy-connectors", "WORKDIR /srv", "WORKDIR is not"},
		{"WORKDIR owned by root", "install -d -o iggy -g iggy /var/lib/iggy-connectors /var/lib/iggy-connectors/state", "install -d /var/lib/iggy-connectors /var/lib/iggy-connectors/state", "not created owned"},
		{"no health check", "HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 CMD [\"iggy-connectors-healthcheck\"]", "", "no HEALTHCHECK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(tc.old)) {
				t.Fatalf("the Dockerfile no longer contains %q; update the test", tc.old)
			}
			d, err := parseDockerfileBytes(imageSpecs[0].dockerfile, bytes.Replace(good, []byte(tc.old), []byte(tc.new), 1))
			if err != nil {
				t.Fatal(err)
			}
			errs := checkDockerfile(root, d, imageSpecs[0], goVersion)
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
				t.Fatalf("want an error containing %q, got %v", tc.want, errs)
			}
		})
	}
}
