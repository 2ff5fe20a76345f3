package transform

import (
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
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
		return uuid.NewString()
	default:
		return newUUIDv7()
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

// newUUIDv7 returns a version-7 UUID. The library keeps those of this process strictly
// increasing, as the uuid crate's now_v7 does: within one millisecond the 12-bit rand_a field
// orders them (RFC 9562 §6.2 method 3), and running out of it borrows the next millisecond.
func newUUIDv7() string {
	// NewV7 fails only when crypto/rand does, which it never does (Go 1.24+).
	return uuid.Must(uuid.NewV7()).String()
}
