package metrics

import (
	"bytes"
	"fmt"
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

// WriteOpenMetrics writes families as OpenMetrics text in upstream's family
// order (see SortUpstream), ending with "# EOF". A family that fails to
// encode is left out and reported; the others are written.
func WriteOpenMetrics(w io.Writer, families []*dto.MetricFamily) error {
	families = slices.Clone(families)
	SortUpstream(families)
	var errs prometheus.MultiError
	var one bytes.Buffer
	for _, f := range families {
		one.Reset()
		if _, err := expfmt.MetricFamilyToOpenMetrics(&one, f); err != nil {
			errs = append(errs, fmt.Errorf("encode family %q: %w", f.GetName(), err))
			continue
		}
		if _, err := w.Write(one.Bytes()); err != nil {
			return fmt.Errorf("write metrics: %w", err)
		}
	}
	if _, err := expfmt.FinalizeOpenMetrics(w); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	return errs.MaybeUnwrap()
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
