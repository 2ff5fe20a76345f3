package testkit

import (
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

// Protocols are the Iggy wire protocols every end-to-end test of the data path runs over; the dev
// broker speaks both on one port and one store.
var Protocols = []string{iggyclient.Protocol08, iggyclient.Protocol09}

// OverProtocols runs test once per protocol, as subtests named "iggy-0.8" and "iggy-0.9".
func OverProtocols(t *testing.T, test func(t *testing.T, protocol string)) {
	t.Helper()
	for _, p := range Protocols {
		t.Run("iggy-"+p, func(t *testing.T) { test(t, p) })
	}
}

// ProtocolEnv is the runtime variable that makes a runner or the supervisor speak protocol.
func ProtocolEnv(protocol string) string { return "IGGY_CONNECTORS_IGGY_PROTOCOL=" + protocol }
