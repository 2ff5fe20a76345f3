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

.PHONY: all build plugins test bench bench-e2e run fuzz vet fmt clean deps

all: build

deps:
	@missing=""; command -v $(CC) >/dev/null 2>&1 || missing="$$missing gcc libc6-dev"; \
	  command -v curl >/dev/null 2>&1 || missing="$$missing curl"; \
	  command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	  python3 -c 'import yaml' >/dev/null 2>&1 || missing="$$missing python3 python3-yaml"; \
	  command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	  if [ -n "$$missing" ]; then apt-get update && apt-get install -y $$missing; fi
	$(GO) mod download

build: deps plugins
	$(GO) build -o $(BIN)/ ./cmd/...

plugins: $(PLUGIN_LIBS)

$(PLUGINS)/libiggy_connector_%.so: $(PLUGIN_SRC)/%.c $(PLUGIN_SRC)/iggy_connector.h $(PLUGIN_SRC)/plugin_util.h
	@mkdir -p $(PLUGINS)
	$(CC) $(CFLAGS) -shared -pthread -o $@ $< -lpthread

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

test: build vet
	$(GO) test -count=1 -timeout 20m ./...

fuzz: build
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

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./...

# The runner against a bare SDK loop, end to end, interleaved (cmd/iggy-bench-e2e); BENCH_E2E_FLAGS
# passes flags, e.g. BENCH_E2E_FLAGS='-cases sink-null -rounds 5'.
bench-e2e: build
	$(BIN)/iggy-bench-e2e $(BENCH_E2E_FLAGS)

run: build
	IGGY_PROTOCOL=$(IGGY_PROTOCOL) ./compose/demo/run.sh

clean:
	rm -rf $(BIN)
