package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// appendFamily writes one family byte for byte as upstream's encoder
// (prometheus-client for Rust) does: integral counter and gauge values as
// integers, histogram lines in _sum, _count, _bucket order, and floats such
// as le bounds in dtoa style ("0.00005", "1.0"). Families of other types
// (summaries, gauge histograms, native histograms) are left to expfmt.
func appendFamily(buf *bytes.Buffer, f *dto.MetricFamily) error {
	switch f.GetType() {
	case dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_UNTYPED:
	case dto.MetricType_HISTOGRAM:
		for _, m := range f.Metric {
			if m.GetHistogram().GetSchema() != 0 || len(m.GetHistogram().GetPositiveSpan()) > 0 || len(m.GetHistogram().GetNegativeSpan()) > 0 {
				_, err := expfmt.MetricFamilyToOpenMetrics(buf, f)
				return err
			}
		}
	default:
		_, err := expfmt.MetricFamilyToOpenMetrics(buf, f)
		return err
	}
	if !legacyNames(f) { // names that need quoting: expfmt knows how
		_, err := expfmt.MetricFamilyToOpenMetrics(buf, f)
		return err
	}
	name := f.GetName()
	typ := "unknown"
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		typ = "counter"
		name = strings.TrimSuffix(name, "_total")
	case dto.MetricType_GAUGE:
		typ = "gauge"
	case dto.MetricType_HISTOGRAM:
		typ = "histogram"
	}
	if f.Help != nil {
		buf.WriteString("# HELP " + name + " ")
		writeEscaped(buf, f.GetHelp())
		buf.WriteByte('\n')
	}
	buf.WriteString("# TYPE " + name + " " + typ + "\n")
	if f.GetUnit() != "" {
		buf.WriteString("# UNIT " + name + " " + f.GetUnit() + "\n")
	}
	var value, le []byte // scratch, reused for every sample
	for _, m := range f.Metric {
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			writeSample(buf, name, "_total", m, nil, appendNumber(value[:0], m.GetCounter().GetValue()))
		case dto.MetricType_GAUGE:
			writeSample(buf, name, "", m, nil, appendNumber(value[:0], m.GetGauge().GetValue()))
		case dto.MetricType_UNTYPED:
			writeSample(buf, name, "", m, nil, appendNumber(value[:0], m.GetUntyped().GetValue()))
		case dto.MetricType_HISTOGRAM:
			h := m.GetHistogram()
			writeSample(buf, name, "_sum", m, nil, appendDtoa(value[:0], h.GetSampleSum()))
			writeSample(buf, name, "_count", m, nil, strconv.AppendUint(value[:0], h.GetSampleCount(), 10))
			sawInf := false
			for _, b := range h.GetBucket() {
				sawInf = sawInf || math.IsInf(b.GetUpperBound(), +1)
				le = appendDtoa(le[:0], b.GetUpperBound())
				writeSample(buf, name, "_bucket", m, le, strconv.AppendUint(value[:0], b.GetCumulativeCount(), 10))
			}
			if !sawInf {
				writeSample(buf, name, "_bucket", m, []byte("+Inf"), strconv.AppendUint(value[:0], h.GetSampleCount(), 10))
			}
		}
	}
	return nil
}

// legacyNames reports whether the family's metric and label names all
// match [a-zA-Z_:][a-zA-Z0-9_:]*, so they can be written unquoted.
func legacyNames(f *dto.MetricFamily) bool {
	if !model.LegacyValidation.IsValidMetricName(f.GetName()) {
		return false
	}
	for _, m := range f.Metric {
		for _, l := range m.Label {
			if !model.LegacyValidation.IsValidLabelName(l.GetName()) {
				return false
			}
		}
	}
	return true
}

// writeSample writes one sample line; le, when not nil, is added as the
// last label.
func writeSample(buf *bytes.Buffer, name, suffix string, m *dto.Metric, le, value []byte) {
	buf.WriteString(name)
	buf.WriteString(suffix)
	if len(m.Label) > 0 || le != nil {
		buf.WriteByte('{')
		for i, l := range m.Label {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(l.GetName())
			buf.WriteString(`="`)
			writeEscaped(buf, l.GetValue())
			buf.WriteByte('"')
		}
		if le != nil {
			if len(m.Label) > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(`le="`)
			buf.Write(le)
			buf.WriteByte('"')
		}
		buf.WriteByte('}')
	}
	buf.WriteByte(' ')
	buf.Write(value)
	if m.TimestampMs != nil {
		buf.WriteByte(' ')
		buf.Write(appendDtoa(nil, float64(m.GetTimestampMs())/1000))
	}
	buf.WriteByte('\n')
}

// writeEscaped escapes backslash, double quote and newline, as OpenMetrics
// requires in label values and help texts.
func writeEscaped(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			buf.WriteString(`\\`)
		case '"':
			buf.WriteString(`\"`)
		case '\n':
			buf.WriteString(`\n`)
		default:
			buf.WriteByte(c)
		}
	}
}

// appendNumber renders a counter or gauge value: upstream's are integers,
// so integral values print without a fraction; anything else in dtoa style.
func appendNumber(dst []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
		return strconv.AppendInt(dst, int64(v), 10)
	}
	return appendDtoa(dst, v)
}

// appendDtoa formats f with the shortest round-trip digits laid out as the
// Rust dtoa crate does: plain decimals for magnitudes from 1e-6 below 1e21
// with ".0" on integral values, scientific notation ("1e-7") beyond.
func appendDtoa(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, +1):
		return append(dst, "+Inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-Inf"...)
	}
	return appendShortest(dst, f, 64, 21)
}

// appendShortest lays out the shortest digits of f (bitSize 32 or 64):
// value = 0.digits × 10^kk; plain notation while -6 < kk <= maxKK.
func appendShortest(dst []byte, f float64, bitSize, maxKK int) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	sci := strconv.FormatFloat(f, 'e', -1, bitSize) // "-d.ddde±XX"
	if sci[0] == '-' {
		dst = append(dst, '-')
		sci = sci[1:]
	}
	mantissa, expText, _ := strings.Cut(sci, "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	exp, _ := strconv.Atoi(expText)
	kk := exp + 1
	n := len(digits)
	switch {
	case n <= kk && kk <= maxKK:
		dst = append(dst, digits...)
		dst = append(dst, strings.Repeat("0", kk-n)...)
		return append(dst, ".0"...)
	case 0 < kk && kk <= maxKK:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:]...)
	case -6 < kk && kk <= 0:
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", -kk)...)
		return append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(kk-1), 10)
	}
}

// seriesNames maps the sample names that families of other types write besides their own name
// (a histogram's _bucket, _sum, _count; a counter's _total; _created) to their family. A family of
// that name would repeat a TYPE line for the same metric, which no parser accepts, so it is left
// out (a runner exposing both a histogram x and a family x_bucket, say).
func seriesNames(families []*dto.MetricFamily) map[string]*dto.MetricFamily {
	taken := map[string]*dto.MetricFamily{}
	for _, f := range families {
		var suffixes []string
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			suffixes = []string{"_bucket", "_sum", "_count", "_created", "_gcount", "_gsum"}
		case dto.MetricType_SUMMARY:
			suffixes = []string{"_sum", "_count", "_created"}
		case dto.MetricType_COUNTER:
			suffixes = []string{"_total", "_created"}
		}
		base := strings.TrimSuffix(f.GetName(), "_total")
		for _, s := range suffixes {
			if base+s != f.GetName() {
				taken[base+s] = f
			}
		}
	}
	return taken
}

// writeFamilies writes families (already ordered) and the final "# EOF".
func writeFamilies(w io.Writer, families []*dto.MetricFamily) error {
	var errs []error
	var one bytes.Buffer
	taken := seriesNames(families)
	for _, f := range families {
		if owner, clash := taken[f.GetName()]; clash {
			errs = append(errs, fmt.Errorf("encode family %q: its name is a series name of the %s family %q", f.GetName(), strings.ToLower(owner.GetType().String()), owner.GetName()))
			continue
		}
		one.Reset()
		if err := appendFamily(&one, f); err != nil {
			errs = append(errs, fmt.Errorf("encode family %q: %w", f.GetName(), err))
			continue
		}
		if _, err := w.Write(one.Bytes()); err != nil {
			return fmt.Errorf("write metrics: %w", err)
		}
	}
	if _, err := io.WriteString(w, "# EOF\n"); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d families left out: %w", len(errs), errors.Join(errs...))
	}
	return nil
}
