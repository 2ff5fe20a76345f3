package metrics

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// TextContentType is the media type upstream serves its OpenMetrics body
// under (not the OpenMetrics one).
const TextContentType = "text/plain; charset=utf-8"

// Handler serves g's families. By default the body is OpenMetrics text
// under TextContentType, families in upstream's order, as upstream serves
// /metrics; a request whose Accept header asks for delimited protobuf
// (Scrape does) gets that instead. A gather error is logged to logger (nil:
// slog.Default) and whatever was gathered is still served; only when
// nothing was gathered does the request fail with 500.
func Handler(g prometheus.Gatherer, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		families, err := g.Gather()
		if err != nil {
			logger.Warn("metrics gathered with errors; serving the rest", "error", err)
			if len(families) == 0 {
				http.Error(w, "gather metrics: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		var buf bytes.Buffer
		contentType := TextContentType
		if format := expfmt.Negotiate(r.Header); format.FormatType() == expfmt.TypeProtoDelim {
			contentType = string(format)
			enc := expfmt.NewEncoder(&buf, format)
			for _, f := range families {
				if err := enc.Encode(f); err != nil {
					logger.Warn("encode metric family", "family", f.GetName(), "error", err)
				}
			}
		} else if err := WriteOpenMetrics(&buf, families); err != nil {
			logger.Warn("encode metrics", "error", err)
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(buf.Bytes())
	})
}

// WriteOpenMetrics writes families as OpenMetrics text the way upstream's
// encoder lays it out (integral counter and gauge values as integers,
// histogram _sum, _count, then _bucket lines, le bounds like "0.00005" and
// "1.0"), in upstream's family order (see SortUpstream), ending with
// "# EOF". Like upstream it lists every connector family, with only its
// HELP and TYPE lines while it has no series. A family that fails to encode is left out and reported; the
// others are written.
func WriteOpenMetrics(w io.Writer, families []*dto.MetricFamily) error {
	families = slices.Clone(families)
	for _, f := range connectorFamilies {
		if !slices.ContainsFunc(families, func(g *dto.MetricFamily) bool { return g.GetName() == f.name }) {
			families = append(families, &dto.MetricFamily{Name: &f.name, Help: &f.help, Type: f.typ.Enum()})
		}
	}
	SortUpstream(families)
	return writeFamilies(w, families)
}

// connectorFamilies are upstream's labelled families, which its /metrics
// always lists, as two comment lines while they have no series; a Go
// registry leaves such families out, so WriteOpenMetrics adds them back.
var connectorFamilies = []struct {
	name, help string
	typ        dto.MetricType
}{
	{FamilyMessagesProduced, helpMessagesProduced, dto.MetricType_COUNTER},
	{FamilyMessagesSent, helpMessagesSent, dto.MetricType_COUNTER},
	{FamilyMessagesConsumed, helpMessagesConsumed, dto.MetricType_COUNTER},
	{FamilyMessagesProcessed, helpMessagesProcessed, dto.MetricType_COUNTER},
	{FamilyMessagesFiltered, helpMessagesFiltered, dto.MetricType_COUNTER},
	{FamilyErrors, helpErrors, dto.MetricType_COUNTER},
	{FamilyStageDuration, helpStageDuration, dto.MetricType_HISTOGRAM},
}

// SortUpstream orders families as upstream's /metrics lists them (its
// registration order), then any other family by name.
func SortUpstream(families []*dto.MetricFamily) {
	rank := func(name string) int {
		if i := slices.Index(familyOrder, name); i >= 0 {
			return i
		}
		return len(familyOrder)
	}
	slices.SortStableFunc(families, func(a, b *dto.MetricFamily) int {
		ra, rb := rank(a.GetName()), rank(b.GetName())
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
}
