package otlp

import (
	"google.golang.org/protobuf/encoding/protowire"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
)

// Field numbers of opentelemetry/proto/collector/logs/v1/logs_service.proto
// and logs/v1/logs.proto.
const (
	requestResourceLogs protowire.Number = 1

	resourceLogsResource protowire.Number = 1
	resourceLogsScopes   protowire.Number = 2
	resourceLogsSchema   protowire.Number = 3

	scopeLogsScope   protowire.Number = 1
	scopeLogsRecords protowire.Number = 2
	scopeLogsSchema  protowire.Number = 3

	recordTime         protowire.Number = 1
	recordSeverity     protowire.Number = 2
	recordSeverityText protowire.Number = 3
	recordBody         protowire.Number = 5
	recordAttributes   protowire.Number = 6
	recordDroppedAttrs protowire.Number = 7
	recordFlags        protowire.Number = 8
	recordTraceID      protowire.Number = 9
	recordSpanID       protowire.Number = 10
	recordObservedTime protowire.Number = 11
	recordEventName    protowire.Number = 12
)

// AppendLogsRequest appends records as an ExportLogsServiceRequest, the
// fields set as the OpenTelemetry Go SDK's OTLP log exporters set them (which
// differs from its trace exporters in small ways: no Resource message for a
// resource without attributes, no scope schema URL without a scope).
func AppendLogsRequest(b []byte, records []sdklog.Record) []byte {
	groups := groupBy(len(records), func(i int) (*resource.Resource, instrumentation.Scope) {
		return records[i].Resource(), records[i].InstrumentationScope()
	})
	for i := 0; i < len(groups); {
		res, key := groups[i].res, groups[i].key
		var rl int
		b, rl = beginMessage(b, requestResourceLogs)
		if res.Len() > 0 {
			b = appendResource(b, resourceLogsResource, res)
		}
		for ; i < len(groups) && groups[i].key == key; i++ {
			g := groups[i]
			var sl int
			b, sl = beginMessage(b, resourceLogsScopes)
			if g.scope != (instrumentation.Scope{}) {
				b = appendScope(b, scopeLogsScope, g.scope)
				b = appendString(b, scopeLogsSchema, g.scope.SchemaURL)
			}
			for _, j := range g.items {
				b = appendLogRecord(b, &records[j])
			}
			b = endMessage(b, sl)
		}
		b = appendString(b, resourceLogsSchema, res.SchemaURL())
		b = endMessage(b, rl)
	}
	return b
}

func appendLogRecord(b []byte, r *sdklog.Record) []byte {
	b, m := beginMessage(b, scopeLogsRecords)
	b = appendFixed64(b, recordTime, unixNano(r.Timestamp()))
	b = appendFixed64(b, recordObservedTime, unixNano(r.ObservedTimestamp()))
	b = appendString(b, recordEventName, r.EventName())
	b = appendVarint(b, recordSeverity, severityNumber(r.Severity()))
	b = appendString(b, recordSeverityText, r.SeverityText())
	b = appendAnyValue(b, recordBody, r.Body()) // always sent, empty when unset
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		b = appendKeyValue(b, recordAttributes, kv)
		return true
	})
	b = appendVarint(b, recordDroppedAttrs, clampUint32(r.DroppedAttributes()))
	b = appendFixed32(b, recordFlags, uint32(r.TraceFlags()))
	if tid := r.TraceID(); tid.IsValid() {
		b = appendBytes(b, recordTraceID, tid[:])
	}
	if sid := r.SpanID(); sid.IsValid() {
		b = appendBytes(b, recordSpanID, sid[:])
	}
	return endMessage(b, m)
}

// severityNumber maps a log severity to OTLP's SeverityNumber: the API
// numbers them the same way, 1 (TRACE) to 24 (FATAL4); anything else is
// unspecified.
func severityNumber(s otellog.Severity) uint64 {
	if s < otellog.SeverityTrace1 || s > otellog.SeverityFatal4 {
		return 0
	}
	return uint64(s)
}
