package plugin

import "sync/atomic"

var lastInstanceID atomic.Uint32

// NextInstanceID returns the next plugin instance id of this process: 1, 2,
// 3... Ids are shared by sinks and sources of every library and never reused,
// because the host callbacks carry nothing but the id.
func NextInstanceID() uint32 { return lastInstanceID.Add(1) }
