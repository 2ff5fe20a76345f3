package devbroker_test

import (
	"io"
	"log"
	"os"
	"testing"
)

// The external tests start brokers and SDK clients with pkg/testkit's helpers.

// TestMain silences the SDK, which logs every login's leader check with the
// standard logger and would bury test and benchmark output.
func TestMain(m *testing.M) {
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}
