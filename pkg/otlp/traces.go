package otlp

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Field numbers of opentelemetry/proto/collector/trace/v1/trace_service.proto
// and trace/v1/trace.proto.
const (
	requestResourceSpans protowire.Number = 1

	resourceSpansResource protowire.Number = 1
	resourceSpansScopes   protowire.Number = 2
	resourceSpansSchema   protowire.Number = 3

	scopeSpansScope  protowire.Number = 1
	scopeSpansSpans  protowire.Number = 2
	scopeSpansSchema protowire.Number = 3

	spanTraceID       protowire.Number = 1
	spanSpanID        protowire.Number = 2
	spanTraceState    protowire.Number = 3
	spanParentSpanID  protowire.Number = 4
	spanName          protowire.Number = 5
	spanKind          protowire.Number = 6
	spanStart         protowire.Number = 7
	spanEnd           protowire.Number = 8
	spanAttributes    protowire.Number = 9
	spanDroppedAttrs  protowire.Number = 10
	spanEvents        protowire.Number = 11
	spanDroppedEvents protowire.Number = 12
	spanLinks         protowire.Number = 13
	spanDroppedLinks  protowire.Number = 14
	spanStatus        protowire.Number = 15
	spanFlags         protowire.Number = 16

	statusMessage protowire.Number = 2
	statusCode    protowire.Number = 3

	eventTime         protowire.Number = 1
	eventName         protowire.Number = 2
	eventAttributes   protowire.Number = 3
	eventDroppedAttrs protowire.Number = 4

	linkTraceID      protowire.Number = 1
	linkSpanID       protowire.Number = 2
	linkAttributes   protowire.Number = 4
	linkDroppedAttrs protowire.Number = 5
	linkFlags        protowire.Number = 6

	// SpanFlags: the lower 8 bits are the W3C trace flags; these say whether
	// the parent (or linked) span context is remote.
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// OTLP Status.StatusCode values.
const (
	statusOK    = 1
	statusError = 2
)

// group is the items of one resource and instrumentation scope, in the
// order they came.
type group struct {
	res   *resource.Resource
	key   attribute.Distinct // res.Equivalent()
	scope instrumentation.Scope
	items []int
}

// groupBy sorts n items into resource and scope groups, each resource's
// groups adjacent, resources in first-seen order. There is usually one of
// each, so a linear search beats a map.
func groupBy(n int, of func(i int) (*resource.Resource, instrumentation.Scope)) []group {
	var groups []group
	for i := range n {
		res, scope := of(i)
		key := res.Equivalent()
		at := -1
		for j := range groups {
			if groups[j].key == key && groups[j].scope == scope {
				at = j
				break
			}
		}
		if at < 0 {
			// Keep a resource's scopes together: insert after its last group.
			at = len(groups)
			for j := len(groups) - 1; j >= 0; j-- {
				if groups[j].key == key {
					at = j + 1
					break
				}
			}
			groups = slices.Insert(groups, at, group{res: res, key: key, scope: scope})
		}
		groups[at].items = append(groups[at].items, i)
	}
	return groups
}

// AppendTraceRequest appends spans as an ExportTraceServiceRequest, the
// fields set as the OpenTelemetry Go SDK's OTLP trace exporters set them.
func AppendTraceRequest(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	groups := groupBy(len(spans), func(i int) (*resource.Resource, instrumentation.Scope) {
		return spans[i].Resource(), spans[i].InstrumentationScope()
	})
	for i := 0; i < len(groups); {
		res, key := groups[i].res, groups[i].key
		var rs int
		b, rs = beginMessage(b, requestResourceSpans)
		if res != nil {
			b = appendResource(b, resourceSpansResource, res)
		}
		for ; i < len(groups) && groups[i].key == key; i++ {
			g := groups[i]
			var ss int
			b, ss = beginMessage(b, resourceSpansScopes)
			if g.scope != (instrumentation.Scope{}) {
				b = appendScope(b, scopeSpansScope, g.scope)
			}
			for _, j := range g.items {
				b = appendSpan(b, spans[j])
			}
			b = appendString(b, scopeSpansSchema, g.scope.SchemaURL)
			b = endMessage(b, ss)
		}
		b = appendString(b, resourceSpansSchema, res.SchemaURL())
		b = endMessage(b, rs)
	}
	return b
}

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	b, m := beginMessage(b, scopeSpansSpans)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, spanTraceID, tid[:])
	b = appendBytes(b, spanSpanID, sid[:])
	b = appendString(b, spanTraceState, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, spanParentSpanID, psid[:])
	}
	b = appendString(b, spanName, s.Name())
	b = appendVarint(b, spanKind, otlpSpanKind(s.SpanKind()))
	b = appendFixed64(b, spanStart, unixNano(s.StartTime()))
	b = appendFixed64(b, spanEnd, unixNano(s.EndTime()))
	b = appendKeyValues(b, spanAttributes, s.Attributes())
	b = appendVarint(b, spanDroppedAttrs, clampUint32(s.DroppedAttributes()))
	for _, e := range s.Events() {
		var em int
		b, em = beginMessage(b, spanEvents)
		b = appendFixed64(b, eventTime, unixNano(e.Time))
		b = appendString(b, eventName, e.Name)
		b = appendKeyValues(b, eventAttributes, e.Attributes)
		b = appendVarint(b, eventDroppedAttrs, clampUint32(e.DroppedAttributeCount))
		b = endMessage(b, em)
	}
	b = appendVarint(b, spanDroppedEvents, clampUint32(s.DroppedEvents()))
	for _, l := range s.Links() {
		var lm int
		b, lm = beginMessage(b, spanLinks)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, linkTraceID, ltid[:])
		b = appendBytes(b, linkSpanID, lsid[:])
		b = appendKeyValues(b, linkAttributes, l.Attributes)
		b = appendVarint(b, linkDroppedAttrs, clampUint32(l.DroppedAttributeCount))
		b = appendFixed32(b, linkFlags, spanFlagsOf(l.SpanContext.TraceFlags(), l.SpanContext))
		b = endMessage(b, lm)
	}
	b = appendVarint(b, spanDroppedLinks, clampUint32(s.DroppedLinks()))
	// The status is always sent, an empty message when unset.
	st := s.Status()
	var sm int
	b, sm = beginMessage(b, spanStatus)
	b = appendString(b, statusMessage, st.Description)
	b = appendVarint(b, statusCode, otlpStatusCode(st.Code))
	b = endMessage(b, sm)
	b = appendFixed32(b, spanFlags, spanFlagsOf(sc.TraceFlags(), parent))
	return endMessage(b, m)
}

func spanFlagsOf(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		flags |= flagIsRemote
	}
	return flags
}

// otlpSpanKind maps a span kind to OTLP's SpanKind: the API numbers them the
// same way, 1 (internal) to 5 (consumer); anything else is unspecified.
func otlpSpanKind(k trace.SpanKind) uint64 {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return 0
	}
	return uint64(k)
}

func otlpStatusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return statusOK
	case codes.Error:
		return statusError
	}
	return 0
}
