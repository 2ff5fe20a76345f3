package otlp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The binaries export telemetry with this package, not with the OpenTelemetry
// OTLP exporters: those link gRPC, the generated OTLP types and grpc-gateway,
// whose package inits cost the supervisor about 3 MiB of resident memory
// (docs/benchmarks.md §7). Tests may use them; the binaries must not.
func TestBinariesDoNotLinkGRPCOrTheOTLPExporters(t *testing.T) {
	forbidden := []string{
		"google.golang.org/grpc",
		"go.opentelemetry.io/otel/exporters/otlp/",
		"go.opentelemetry.io/proto/otlp/",
		"github.com/grpc-ecosystem/grpc-gateway",
	}
	for _, bin := range []string{"iggy-connectors", "iggy-connector-runner"} {
		t.Run(bin, func(t *testing.T) {
			deps := testkit.PackageDeps(t, "../../cmd/"+bin)
			if !slices.Contains(deps, "github.com/iggy-connectors-go/runtime/pkg/otlp") {
				t.Fatalf("%s does not use pkg/otlp; deps: %v", bin, deps)
			}
			for _, dep := range deps {
				for _, f := range forbidden {
					if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) {
						t.Errorf("%s links %s; export telemetry with pkg/otlp instead", bin, dep)
					}
				}
			}
		})
	}
}
