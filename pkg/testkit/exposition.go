package testkit

// The tests read what /metrics routes serve, in any format a Prometheus
// client or upstream's runtime emits, back into families: ParseMetrics and
// ScrapeMetrics.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// MaxExpositionBytes bounds a /metrics body ParseMetrics reads (one
// connector's families take a few KiB).
const MaxExpositionBytes = 8 << 20

// ErrBadExposition wraps every failure of ParseMetrics to read a metrics exposition.
var ErrBadExposition = errors.New("bad metrics exposition")

// scrapeAccept asks for delimited protobuf (lossless and cheap to parse),
// then OpenMetrics, then the classic text format.
const scrapeAccept = `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.9,` +
	`application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3`

// ParseMetrics reads a metrics exposition. contentType picks the format: delimited
// protobuf, OpenMetrics, or text/plain, whose body may be OpenMetrics (as
// upstream serves it, ending in "# EOF") or the classic text format. The
// body is bounded by MaxExpositionBytes. Errors wrap ErrBadExposition.
func ParseMetrics(r io.Reader, contentType string) ([]*dto.MetricFamily, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxExpositionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read body: %w", ErrBadExposition, err)
	}
	if len(body) > MaxExpositionBytes {
		return nil, fmt.Errorf("%w: body larger than %d bytes", ErrBadExposition, MaxExpositionBytes)
	}
	format := expfmt.ResponseFormat(http.Header{"Content-Type": []string{contentType}})
	if format.FormatType() != expfmt.TypeProtoDelim {
		// Text of either kind goes through the classic text parser: expfmt's
		// OpenMetrics parser takes seconds to build its grammar and
		// milliseconds per small body, too slow for a scrape of every runner.
		if format.FormatType() == expfmt.TypeOpenMetrics || looksLikeOpenMetrics(body) {
			body = openMetricsToText(body)
		}
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	var families []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		err := dec.Decode(mf)
		if errors.Is(err, io.EOF) {
			return families, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w (%s): %w", ErrBadExposition, format, err)
		}
		families = append(families, mf)
	}
}

// openMetricsToText rewrites the OpenMetrics subset that Prometheus clients
// emit into the classic text format: a counter family "x" (samples
// "x_total") is declared as "x_total", "unknown" becomes "untyped", and the
// "# EOF" and "# UNIT" lines, "_created" samples and exemplars are dropped.
// Anything else is left for the text parser to accept or refuse.
func openMetricsToText(body []byte) []byte {
	lines := bytes.Split(body, []byte("\n"))
	types := map[string]string{}
	for _, line := range lines {
		if rest, ok := bytes.CutPrefix(line, []byte("# TYPE ")); ok {
			if name, typ, ok := strings.Cut(string(rest), " "); ok {
				types[name] = strings.TrimSpace(typ)
			}
		}
	}
	out := make([]byte, 0, len(body)+len(types)*16)
	for _, line := range lines {
		switch {
		case len(line) == 0, bytes.Equal(line, []byte("# EOF")), bytes.HasPrefix(line, []byte("# UNIT ")):
			continue
		case bytes.HasPrefix(line, []byte("# TYPE ")), bytes.HasPrefix(line, []byte("# HELP ")):
			keyword, rest := string(line[:7]), string(line[7:])
			name, tail, _ := strings.Cut(rest, " ")
			if types[name] == "counter" && !strings.HasSuffix(name, "_total") {
				name += "_total"
			}
			if keyword == "# TYPE " && tail == "unknown" {
				tail = "untyped"
			}
			out = append(out, keyword+name+" "+tail...)
		case line[0] == '#':
			out = append(out, line...)
		default:
			name := string(line[:max(0, bytes.IndexAny(line, "{ "))])
			if base, ok := strings.CutSuffix(name, "_created"); ok && types[base] != "" {
				continue
			}
			if i := bytes.Index(line, []byte(" # {")); i >= 0 {
				line = line[:i]
			}
			out = appendTextSample(out, line)
		}
		out = append(out, '\n')
	}
	return out
}

// appendTextSample appends an OpenMetrics sample line in the classic text format: the same but
// for the timestamp, which OpenMetrics writes in seconds (a float) and the text format in
// integer milliseconds. A timestamp that does not read as a number is left for the parser to
// refuse.
func appendTextSample(out, line []byte) []byte {
	rest := line[sampleNameEnd(line):]
	fields := bytes.Fields(rest)
	if len(fields) != 2 {
		return append(out, line...)
	}
	seconds, err := strconv.ParseFloat(string(fields[1]), 64)
	if err != nil || math.IsNaN(seconds) || math.IsInf(seconds, 0) || math.Abs(seconds) > math.MaxInt64/1000 {
		return append(out, line...)
	}
	out = append(out, line[:len(line)-len(rest)]...)
	out = append(out, ' ')
	out = append(out, fields[0]...)
	out = append(out, ' ')
	return strconv.AppendInt(out, int64(math.Round(seconds*1000)), 10)
}

// sampleNameEnd is the index just past a sample line's name and label set: label values are
// quoted and may hold spaces, braces and escaped quotes.
func sampleNameEnd(line []byte) int {
	i := bytes.IndexAny(line, "{ ")
	if i < 0 {
		return len(line)
	}
	if line[i] == ' ' {
		return i
	}
	inQuote := false
	for j := i + 1; j < len(line); j++ {
		switch c := line[j]; {
		case inQuote && c == '\\':
			j++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '}':
			return j + 1
		}
	}
	return len(line)
}

// looksLikeOpenMetrics reports whether a text body ends with the
// OpenMetrics "# EOF" line.
func looksLikeOpenMetrics(body []byte) bool {
	trimmed := bytes.TrimRight(body, "\n")
	return bytes.HasSuffix(trimmed, []byte("\n# EOF")) || bytes.Equal(trimmed, []byte("# EOF"))
}

// ScrapeMetrics fetches url (a /metrics route) with client and parses it.
// Non-200 answers are errors naming the status.
func ScrapeMetrics(ctx context.Context, client *http.Client, url string) ([]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	req.Header.Set("Accept", scrapeAccept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("scrape %s: status %s", url, resp.Status)
	}
	families, err := ParseMetrics(resp.Body, resp.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return families, nil
}
