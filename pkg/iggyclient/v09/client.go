package v09

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/engine"
)

// protocol is Iggy 0.9 for the engine.
type protocol struct {
	engine *engine.Engine[*conn] // its options (credentials), its logger, Join

	idMu     sync.Mutex
	idSource *rand.Rand // ids of messages sent with a zero id
}

// NewProtocol is Iggy 0.9 for an engine (engine.Dial).
func NewProtocol(e *engine.Engine[*conn]) engine.Protocol[*conn] {
	return &protocol{engine: e, idSource: newIDSource()}
}

// Name implements engine.Protocol.
func (*protocol) Name() string { return api.Protocol09 }

// LossBudget implements engine.Protocol: a node that keeps refusing (58) is given
// notCommittedBudget in all, reconnecting to look for the leader.
func (*protocol) LossBudget(err error) time.Duration {
	if isNotLeader(err) {
		return notCommittedBudget
	}
	return 0
}

// newIDSource is the generator of message ids: PCG seeded from the system's randomness, several
// times faster than the global ChaCha8 for a batch of ids (message ids need to be unique, not
// secret).
func newIDSource() *rand.Rand {
	var seed [16]byte
	_, _ = crand.Read(seed[:])
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:]), binary.LittleEndian.Uint64(seed[8:])))
}

// randomUUID is a version 4 UUID: the id a zero message id gets, as the Go SDK does.
func randomUUID(r *rand.Rand) [16]byte {
	var id [16]byte
	binary.LittleEndian.PutUint64(id[:], r.Uint64())
	binary.LittleEndian.PutUint64(id[8:], r.Uint64())
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}
