package transform

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// computedKind is a value generated per field per message; each one reads
// the clock separately, as upstream does.
type computedKind string

const (
	computedDateTime        computedKind = "date_time"
	computedTimestampNanos  computedKind = "timestamp_nanos"
	computedTimestampMicros computedKind = "timestamp_micros"
	computedTimestampMillis computedKind = "timestamp_millis"
	computedTimestampSecs   computedKind = "timestamp_seconds"
	computedUUIDv4          computedKind = "uuid_v4"
	computedUUIDv7          computedKind = "uuid_v7"
)

var computedKinds = []computedKind{computedDateTime, computedTimestampNanos, computedTimestampMicros,
	computedTimestampMillis, computedTimestampSecs, computedUUIDv4, computedUUIDv7}

func parseComputedKind(name string) (computedKind, error) {
	for _, k := range computedKinds {
		if string(k) == name {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown kind %q (expected one of date_time, timestamp_nanos, timestamp_micros, "+
		"timestamp_millis, timestamp_seconds, uuid_v4, uuid_v7)", name)
}

// generate returns a fresh value in the JSON model. Timestamps are int64, as
// upstream produces signed integers for them.
func (k computedKind) generate() any {
	now := time.Now()
	switch k {
	case computedDateTime:
		return formatRFC3339(now)
	case computedTimestampNanos:
		return now.UnixNano()
	case computedTimestampMicros:
		return now.UnixMicro()
	case computedTimestampMillis:
		return now.UnixMilli()
	case computedTimestampSecs:
		return now.Unix()
	case computedUUIDv4:
		return newUUIDv4()
	default:
		return newUUIDv7(now)
	}
}

// formatRFC3339 writes t in UTC like upstream (chrono's to_rfc3339): a
// "+00:00" offset and the fewest of 0, 3, 6 or 9 fraction digits that show
// the nanoseconds exactly.
func formatRFC3339(t time.Time) string {
	t = t.UTC()
	b := make([]byte, 0, 35)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	nanos := t.Nanosecond()
	switch {
	case nanos == 0:
	case nanos%1_000_000 == 0:
		b = appendFraction(b, nanos/1_000_000, 3)
	case nanos%1_000 == 0:
		b = appendFraction(b, nanos/1_000, 6)
	default:
		b = appendFraction(b, nanos, 9)
	}
	return string(append(b, "+00:00"...))
}

func appendFraction(b []byte, value, width int) []byte {
	b = append(b, '.')
	digits := strconv.Itoa(value)
	for range width - len(digits) {
		b = append(b, '0')
	}
	return append(b, digits...)
}

func newUUIDv4() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
}

// uuidV7State keeps v7 UUIDs of this process strictly increasing, like the
// uuid crate's now_v7: within one millisecond the 12-bit rand_a field is a
// counter (RFC 9562 §6.2 method 1), and its overflow borrows the next
// millisecond.
var uuidV7State struct {
	sync.Mutex
	lastMillis int64
	counter    uint16
}

func newUUIDv7(now time.Time) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	ms := now.UnixMilli()
	uuidV7State.Lock()
	if ms > uuidV7State.lastMillis {
		uuidV7State.lastMillis = ms
		// A random start in the lower half leaves room for the counter.
		uuidV7State.counter = binary.BigEndian.Uint16(u[6:8]) & 0x07ff
	} else {
		ms = uuidV7State.lastMillis
		uuidV7State.counter++
		if uuidV7State.counter > 0x0fff {
			ms++
			uuidV7State.lastMillis = ms
			uuidV7State.counter = 0
		}
	}
	counter := uuidV7State.counter
	uuidV7State.Unlock()
	var stamp [8]byte
	binary.BigEndian.PutUint64(stamp[:], uint64(ms))
	copy(u[0:6], stamp[2:8])
	u[6] = 0x70 | byte(counter>>8)
	u[7] = byte(counter)
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u)
}

func formatUUID(u [16]byte) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 36)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&0xf])
	}
	return string(b)
}
