package tap

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Mask selects points, one bit each; a hub keeps the union of its subscribers' masks so the
// pipeline asks with one atomic load whether a point is tapped at all.
type Mask uint32

// The bit of each point.
const (
	MaskPolled Mask = 1 << iota
	MaskDelivered
	MaskDeadLettered
	MaskProduced
	MaskSent
)

// MaskOf is the bit of a point name, 0 for a name that is no point.
func MaskOf(point string) Mask {
	switch point {
	case PointPolled:
		return MaskPolled
	case PointDelivered:
		return MaskDelivered
	case PointDeadLettered:
		return MaskDeadLettered
	case PointProduced:
		return MaskProduced
	case PointSent:
		return MaskSent
	}
	return 0
}

// Query defaults and bounds.
const (
	DefaultRate = 100       // events a second when the client names no rate
	MaxRate     = 1_000_000 // a larger rate is refused (400); this one takes every message
)

// Connector kinds a query is checked against (the connector_type values).
const (
	KindSink   = "sink"
	KindSource = "source"
)

// ErrBadQuery wraps every refused tap query; the message names the parameter.
var ErrBadQuery = errors.New("bad tap query")

// Query is what a tap client asks for: GET /tap?point=..&limit=..&rate=..&partition=..
type Query struct {
	Points    []string // the points tapped, in pipeline order; all of the kind when none is named
	Limit     int      // the stream ends after this many message events; 0: no limit
	Rate      int      // at most this many message events a second (DefaultRate when not named)
	Partition *uint32  // sink points only: messages of this partition only; nil: every partition
}

// Mask is the union of the query's points.
func (q Query) Mask() Mask {
	var m Mask
	for _, p := range q.Points {
		m |= MaskOf(p)
	}
	return m
}

// ParseQuery reads a tap query for a connector of kind (KindSink or KindSource). point may be
// repeated or comma-separated; every error wraps ErrBadQuery and names the parameter and what it
// accepts.
func ParseQuery(v url.Values, kind string) (Query, error) {
	points := SinkPoints
	if kind == KindSource {
		points = SourcePoints
	}
	q := Query{Rate: DefaultRate}
	for _, raw := range v["point"] {
		for p := range strings.SplitSeq(raw, ",") {
			p = strings.TrimSpace(p)
			if !slices.Contains(points, p) {
				return Query{}, fmt.Errorf("%w: point %q: a %s taps %s", ErrBadQuery, p, kind, strings.Join(points, ", "))
			}
			if !slices.Contains(q.Points, p) {
				q.Points = append(q.Points, p)
			}
		}
	}
	if len(q.Points) == 0 {
		q.Points = slices.Clone(points)
	} else {
		slices.SortFunc(q.Points, func(a, b string) int { return slices.Index(points, a) - slices.Index(points, b) })
	}
	var err error
	if q.Limit, err = intParam(v, "limit", 0, 1<<31-1); err != nil {
		return Query{}, err
	}
	if v.Has("rate") {
		if q.Rate, err = intParam(v, "rate", 1, MaxRate); err != nil {
			return Query{}, err
		}
	}
	if v.Has("partition") {
		if kind == KindSource {
			return Query{}, fmt.Errorf("%w: partition: a source's points come before Iggy places a message in a partition; tap a sink for partitions", ErrBadQuery)
		}
		p, err := strconv.ParseUint(v.Get("partition"), 10, 32)
		if err != nil {
			return Query{}, fmt.Errorf("%w: partition %q: want a partition id (0 or more)", ErrBadQuery, v.Get("partition"))
		}
		part := uint32(p)
		q.Partition = &part
	}
	return q, nil
}

func intParam(v url.Values, name string, lo, hi int) (int, error) {
	if !v.Has(name) {
		return 0, nil
	}
	n, err := strconv.Atoi(v.Get(name))
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%w: %s %q: want a whole number from %d to %d", ErrBadQuery, name, v.Get(name), lo, hi)
	}
	return n, nil
}

// Values is the query as URL parameters, for a proxy that asks runners on the client's behalf.
func (q Query) Values() url.Values {
	v := url.Values{}
	for _, p := range q.Points {
		v.Add("point", p)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	v.Set("rate", strconv.Itoa(q.Rate))
	if q.Partition != nil {
		v.Set("partition", strconv.FormatUint(uint64(*q.Partition), 10))
	}
	return v
}
