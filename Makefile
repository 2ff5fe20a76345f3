# Everything a fresh machine needs: `make run` for the demo, `make test` for the whole suite.
GO       ?= go
CC       ?= cc
BIN      := bin
PLUGINS  := $(BIN)/plugins
CFLAGS   ?= -O2 -fPIC -Wall -Wextra -std=c11 -D_GNU_SOURCE
PLUGIN_SRC := pkg/plugin/cplugins
PLUGIN_NAMES := stdout_sink random_source null_sink fault
PLUGIN_LIBS := $(foreach n,$(PLUGIN_NAMES),$(PLUGINS)/libiggy_connector_$(n).so)
FUZZTIME ?= 20s

.PHONY: all build plugins test bench bench-e2e run fuzz vet fmt clean deps-plugins deps-test

all: build

# Packages: `make build` needs only Go. Only the plugin and test targets install what is missing,
# with apt: a C compiler for the plugins; for the tests also curl (the images' health probe),
# prometheus (promtool and a real server), python3-yaml (a YAML 1.1 reader) and chromium.
APT_INSTALL = if [ -n "$$missing" ]; then echo "installing:$$missing"; apt-get update && apt-get install -y $$missing; fi

deps-plugins:
	@missing=""; command -v $(CC) >/dev/null 2>&1 || missing=" gcc libc6-dev"; $(APT_INSTALL)

deps-test: deps-plugins
	@missing=""; command -v curl >/dev/null 2>&1 || missing="$$missing curl"; \
	  command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	  python3 -c 'import yaml' >/dev/null 2>&1 || missing="$$missing python3 python3-yaml"; \
	  command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	  $(APT_INSTALL)

build:
	$(GO) build -o $(BIN)/ ./cmd/...

plugins: $(PLUGIN_LIBS)

$(PLUGINS)/libiggy_connector_%.so: $(PLUGIN_SRC)/%.c $(PLUGIN_SRC)/iggy_connector.h $(PLUGIN_SRC)/plugin_util.h | deps-plugins
	@mkdir -p $(PLUGINS)
	$(CC) $(CFLAGS) -shared -pthread -o $@ $< -lpthread

# The images' checks are a module of their own (images/go.mod), so the deployment tools they
# parse with (Helm, Kubernetes, kustomize, buildkit, compose-go, HCL) stay out of the root go.mod
# and out of the binaries' `go mod download`: vet and test cover both modules.
vet:
	$(GO) vet ./...
	cd images && $(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

test: build plugins deps-test vet
	@status=0; \
	  $(GO) test -count=1 -timeout 20m ./... || status=1; \
	  (cd images && $(GO) test -count=1 -timeout 20m ./...) || status=1; \
	  exit $$status

fuzz: build plugins
	@# Go's fuzzer can end with "context deadline exceeded" when a worker is busy at the deadline
	@# with no finding, so only a written failing input fails the run. With -parallel=1 the one
	@# worker spends up to -fuzzminimizetime on every new interesting input, and the exec count
	@# stands still meanwhile: "0/sec" lines for a few seconds are that, not a slow input.
	@set -e; for t in $$(grep -rl --include='*_test.go' '^func Fuzz' pkg runner supervisor 2>/dev/null | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$t/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$t $$f"; \
	    if ! $(GO) test ./$$t -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -parallel=1 -fuzzminimizetime 5s > $(BIN)/fuzz.out 2>&1; then \
	      cat $(BIN)/fuzz.out; \
	      if grep -q 'Failing input written' $(BIN)/fuzz.out || ! grep -q 'context deadline exceeded' $(BIN)/fuzz.out; then exit 1; fi; \
	      echo "(deadline reached mid-input; no finding)"; \
	    else tail -n 1 $(BIN)/fuzz.out; fi; \
	  done; done

bench: build plugins
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./...

# The runner against a bare SDK loop, end to end, interleaved (cmd/iggy-bench-e2e); BENCH_E2E_FLAGS
# passes flags, e.g. BENCH_E2E_FLAGS='-cases sink-null -rounds 5'.
bench-e2e: build plugins
	$(BIN)/iggy-bench-e2e $(BENCH_E2E_FLAGS)

run: build plugins
	IGGY_PROTOCOL=$(IGGY_PROTOCOL) ./compose/demo/run.sh

clean:
	rm -rf $(BIN)
