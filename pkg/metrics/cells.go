package metrics

import (
	"encoding/binary"
	"math"
	"runtime"
	"sort"
	"sync/atomic"
	"time"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	"github.com/iggy-connectors-go/runtime/pkg/version"
)

// cells are one connector's figures in a fixed layout of 64-bit words, so they can live in a
// shared file mapping (Page) as well as in ordinary memory: counters, stage histogram buckets, the
// runner's identity and heartbeat, and its status behind a sequence lock. Every field is read and
// written atomically; the layout holds no Go pointers. Any change of the layout needs a new
// pageLayoutVersion.
type cells struct {
	header pageHeader

	created  atomic.Uint64 // bit per series that exists (upstream creates series lazily, §4.3.3)
	counters [numCounters]atomic.Uint64
	stages   [numStages]stageCells

	// The runner process attached to the cells.
	pid       atomic.Uint64
	startTime atomic.Uint64 // µs since the epoch
	heartbeat atomic.Uint64 // CLOCK_MONOTONIC ns of the runner's last beat

	// The texts, under a sequence lock: seq is odd while the runner writes them.
	seq         atomic.Uint64
	status      atomic.Uint64 // index into pageStatuses; 0: nothing published yet
	errorTime   atomic.Uint64 // µs since the epoch
	errorLen    atomic.Uint64 // bytes in errorText plus one; 0: no last error
	errorText   [lastErrorBytes / 8]atomic.Uint64
	versionLen  atomic.Uint64
	versionText [pluginVersionBytes / 8]atomic.Uint64

	// Records sent to the dead-letter topic (or skipped without one), per DeadLetterStages index.
	deadLettered [numDeadLetterStages]atomic.Uint64

	// A sink's consumer lag per partition (lag.go).
	lag lagCells

	// Plugin log lines dropped over the runner's per-second limit (ours, additive).
	logLinesDropped atomic.Uint64

	// Time spent waiting for the connector's rate limit (throttle.go).
	throttle throttleCells
	// Tap events dropped because a tap client's buffer was full (ours, additive; pkg/tap).
	tapDropped atomic.Uint64
}

// Counter indices into cells.counters, in upstream's family order.
const (
	counterProduced = iota
	counterSent
	counterConsumed
	counterProcessed
	counterFiltered
	counterErrors
	numCounters
)

var counterFamilies = [numCounters]struct{ name, help string }{
	{FamilyMessagesProduced, helpMessagesProduced},
	{FamilyMessagesSent, helpMessagesSent},
	{FamilyMessagesConsumed, helpMessagesConsumed},
	{FamilyMessagesProcessed, helpMessagesProcessed},
	{FamilyMessagesFiltered, helpMessagesFiltered},
	{FamilyErrors, helpErrors},
}

// knownStages are the stages the cells hold, indexed as cells.stages.
var knownStages = [numStages]string{StageDecode, StagePrepare, StageFFI, StageIggySend, StageStateSave, StageTotal}

const numStages = 6

// stagesInSeriesOrder lists the stage indices sorted by stage name: the order a registry gives
// the series of one family.
var stagesInSeriesOrder = func() []int {
	order := []int{0, 1, 2, 3, 4, 5}
	sort.Slice(order, func(a, b int) bool { return knownStages[order[a]] < knownStages[order[b]] })
	return order
}()

// numStageBuckets is len(StageBuckets); a test keeps the two equal.
const numStageBuckets = 13

type stageCells struct {
	buckets [numStageBuckets + 1]atomic.Uint64 // observations per bucket (not cumulative); the last is +Inf
	sumBits atomic.Uint64                      // float64 bits of the sum of observed seconds
}

const (
	lastErrorBytes     = 2048 // a longer last_error is cut (at a UTF-8 boundary)
	pluginVersionBytes = 64
)

// pageStatuses are the status values by their stored index; new values are appended, so a stored
// index keeps its meaning.
var pageStatuses = [...]string{"", StatusStarting, StatusRunning, StatusStopping, StatusStopped, StatusError, StatusPaused, StatusStandby}

func statusIndex(s string) uint64 {
	for i, v := range pageStatuses {
		if v == s && i > 0 {
			return uint64(i)
		}
	}
	return 0
}

func createdBit(series int) uint64 { return 1 << series }

func stageSeries(stage int) int { return numCounters + stage }

// deadLetterSeries is the created bit of one dead-letter stage's series.
func deadLetterSeries(stage int) int { return numCounters + numStages + stage }

// deadLettersShown is the created bit that puts messages_dead_lettered in /stats before anything
// was dead-lettered (a connector with tolerance = "all").
const deadLettersShown = numCounters + numStages + numDeadLetterStages

// numDeadLetterStages is len(DeadLetterStages).
const numDeadLetterStages = 5

func deadLetterStageIndex(stage string) int {
	for i, s := range DeadLetterStages {
		if s == stage {
			return i
		}
	}
	return -1
}

// deadLetteredTotal is the sum over stages, nil when the connector shows none.
func (c *cells) deadLetteredTotal(created uint64) *uint64 {
	var sum uint64
	shown := created&createdBit(deadLettersShown) != 0
	for i := range numDeadLetterStages {
		if created&createdBit(deadLetterSeries(i)) != 0 {
			shown = true
			sum += c.deadLettered[i].Load()
		}
	}
	if !shown {
		return nil
	}
	return &sum
}

func (c *cells) add(counter int, n uint64) {
	c.counters[counter].Add(n)
	c.create(counter)
}

func (c *cells) create(series int) {
	if c.created.Load()&createdBit(series) == 0 {
		c.created.Or(createdBit(series))
	}
}

// observe records one stage duration the way a Prometheus histogram does: the first bucket whose
// upper bound is >= seconds, and the sum as float64 additions in observation order.
func (c *cells) observe(stage int, seconds float64) {
	st := &c.stages[stage]
	for {
		old := st.sumBits.Load()
		if st.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+seconds)) {
			break
		}
	}
	st.buckets[sort.SearchFloat64s(StageBuckets, seconds)].Add(1)
	c.create(stageSeries(stage))
}

// beat records that the attached runner is alive now.
func (c *cells) beat() { c.heartbeat.Store(monotonicNow()) }

// heartbeatAge is how long ago the runner last beat (a very large value when it never did).
func (c *cells) heartbeatAge() time.Duration {
	last := c.heartbeat.Load()
	if last == 0 {
		return math.MaxInt64
	}
	return time.Duration(monotonicNow() - min(last, monotonicNow()))
}

func monotonicNow() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // cannot fail for this clock
	return uint64(ts.Nano())
}

// publish writes the status, the last error (nil: none) and the plugin version.
// Only one goroutine of one process may write at a time (Connector serialises its writers).
func (c *cells) publish(status string, le *LastError, pluginVersion string) {
	s := c.seq.Load()
	if s&1 == 1 {
		s++ // a writer died inside: its half-written texts are overwritten now
	}
	c.seq.Store(s + 1)
	c.status.Store(statusIndex(status))
	if le == nil {
		c.errorLen.Store(0)
	} else {
		msg := cutUTF8(le.Message, lastErrorBytes)
		storeText(c.errorText[:], msg)
		c.errorTime.Store(le.Timestamp)
		c.errorLen.Store(uint64(len(msg)) + 1)
	}
	v := cutUTF8(pluginVersion, pluginVersionBytes)
	storeText(c.versionText[:], v)
	c.versionLen.Store(uint64(len(v)))
	c.seq.Store(s + 2)
}

// texts is what publish wrote.
type texts struct {
	status        string // "" when nothing was published yet
	lastError     *LastError
	pluginVersion string // "unknown" when none was published
}

// readTexts reads a consistent copy of the published texts; ok is false when a writer stayed
// inside the lock throughout (a runner killed while writing).
func (c *cells) readTexts() (t texts, ok bool) {
	ok = c.readLocked(func() {
		t = texts{status: c.loadStatus(), pluginVersion: "unknown"}
		if n := c.errorLen.Load(); n > 0 && n-1 <= lastErrorBytes {
			t.lastError = &LastError{Message: loadText(c.errorText[:], int(n-1)), Timestamp: c.errorTime.Load()}
		}
		if n := c.versionLen.Load(); n > 0 && n <= pluginVersionBytes {
			t.pluginVersion = loadText(c.versionText[:], int(n))
		}
	})
	if !ok {
		return texts{pluginVersion: "unknown"}, false
	}
	return t, true
}

// readStatus is readTexts' status alone, without copying the texts ("" as readTexts gives it).
func (c *cells) readStatus() string {
	var status string
	if !c.readLocked(func() { status = c.loadStatus() }) {
		return ""
	}
	return status
}

// readLocked runs read until it ran with no writer inside the sequence lock (true), or gives up
// after 100 tries (false: a writer stayed inside throughout).
func (c *cells) readLocked(read func()) bool {
	for try := 0; try < 100; try++ {
		s := c.seq.Load()
		if s&1 == 1 {
			runtime.Gosched()
			continue
		}
		read()
		if c.seq.Load() == s {
			return true
		}
	}
	return false
}

// loadStatus is the stored status ("" when none was published); call it inside readLocked.
func (c *cells) loadStatus() string {
	if i := c.status.Load(); i < uint64(len(pageStatuses)) {
		return pageStatuses[i]
	}
	return ""
}

func storeText(words []atomic.Uint64, s string) {
	var w [8]byte
	for i := 0; i*8 < len(s); i++ {
		clear(w[:])
		copy(w[:], s[i*8:])
		words[i].Store(binary.LittleEndian.Uint64(w[:]))
	}
}

func loadText(words []atomic.Uint64, n int) string {
	buf := make([]byte, (n+7)/8*8)
	for i := range len(buf) / 8 {
		binary.LittleEndian.PutUint64(buf[i*8:], words[i].Load())
	}
	return string(buf[:n])
}

// cutUTF8 shortens s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// counts reads the counters a /stats object of kind shows, creating their series at 0 when
// create is set (upstream creates them on every /stats read, §4.3.3).
func (c *cells) fillCounts(s *ConnectorStats, kind string, create bool) {
	read := func(counter int) *uint64 {
		if create {
			c.create(counter)
		}
		v := c.counters[counter].Load()
		return &v
	}
	if kind == KindSource {
		s.MessagesProduced = read(counterProduced)
		s.MessagesSent = read(counterSent)
	} else {
		s.MessagesConsumed = read(counterConsumed)
		s.MessagesProcessed = read(counterProcessed)
	}
	s.MessagesFiltered = read(counterFiltered)
	s.Errors = *read(counterErrors)
	s.MessagesDeadLettered = c.deadLetteredTotal(c.created.Load())
	s.Lag = c.lag.total()
	if n := c.logLinesDropped.Load(); n > 0 {
		s.LogLinesDropped = &n
	}
	s.ThrottledSeconds = c.throttle.seconds()
	if n := c.tapDropped.Load(); n > 0 {
		s.TapDropped = &n
	}
}

// stats is the connector's /stats object as far as the cells know it: identity, the published
// status and version, the counters (created when create is set), and the attached runner's pid,
// start and run time. Name, enabled and the process figures are the caller's.
func (c *cells) stats(key, kind string, create bool) ConnectorStats {
	t, _ := c.readTexts()
	s := ConnectorStats{Key: key, Name: key, ConnectorType: kind, Version: t.pluginVersion, Status: t.status, Enabled: true, LastError: t.lastError}
	if v, ok := version.Semver(s.Version); ok {
		s.VersionSemver = &v
	}
	c.fillCounts(&s, kind, create)
	s.PID = int32(c.pid.Load())
	if start := c.startTime.Load(); start > 0 {
		s.StartTime = start
		s.RunTime = uint64(max(time.Now().UnixMicro()-int64(start), 0))
	}
	return s
}

// seriesLabels are the label pairs of one connector's series, built once and shared by every
// gathered family (which must not be changed).
type seriesLabels struct {
	connector  []*dto.LabelPair                      // connector_key, connector_type
	stage      [numStages][]*dto.LabelPair           // plus stage
	deadLetter [numDeadLetterStages][]*dto.LabelPair // plus the dead-letter stage
}

func newSeriesLabels(key, kind string) *seriesLabels {
	l := &seriesLabels{connector: []*dto.LabelPair{labelPair(LabelConnectorKey, key), labelPair(LabelConnectorType, kind)}}
	for i, stage := range knownStages {
		l.stage[i] = append(l.connector[:2:2], labelPair(LabelStage, stage))
	}
	for i, stage := range DeadLetterStages {
		l.deadLetter[i] = append(l.connector[:2:2], labelPair(LabelStage, stage))
	}
	return l
}

// labelPair is one label of a series.
func labelPair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// stageBucketBounds are StageBuckets, addressable for dto.Bucket.
var stageBucketBounds = func() []float64 { return append([]float64(nil), StageBuckets...) }()

// families renders the series that exist as Prometheus families, named, described and labelled as
// upstream's registry has them: counters in family order, then the stage histogram with its series
// sorted by stage name. A family without series is left out, as a registry leaves it out.
func (c *cells) families(l *seriesLabels) []*dto.MetricFamily {
	created := c.created.Load()
	out := make([]*dto.MetricFamily, 0, numCounters+1)
	counterType, histogramType := dto.MetricType_COUNTER, dto.MetricType_HISTOGRAM
	for i := range numCounters {
		if created&createdBit(i) == 0 {
			continue
		}
		v := float64(c.counters[i].Load())
		out = append(out, &dto.MetricFamily{
			Name: &counterFamilies[i].name, Help: &counterFamilies[i].help, Type: &counterType,
			Metric: []*dto.Metric{{Label: l.connector, Counter: &dto.Counter{Value: &v}}},
		})
	}
	var stages *dto.MetricFamily
	for _, i := range stagesInSeriesOrder {
		if created&createdBit(stageSeries(i)) == 0 {
			continue
		}
		if stages == nil {
			name, help := FamilyStageDuration, helpStageDuration
			stages = &dto.MetricFamily{Name: &name, Help: &help, Type: &histogramType}
			out = append(out, stages)
		}
		stages.Metric = append(stages.Metric, &dto.Metric{Label: l.stage[i], Histogram: c.stages[i].histogram()})
	}
	// Ours (docs/architecture.md, decision 14), after upstream's families; series sorted by stage name.
	var dead *dto.MetricFamily
	for _, i := range deadLetterStagesInSeriesOrder {
		if created&createdBit(deadLetterSeries(i)) == 0 {
			continue
		}
		if dead == nil {
			name, help := FamilyDeadLettered, helpDeadLettered
			dead = &dto.MetricFamily{Name: &name, Help: &help, Type: &counterType}
			out = append(out, dead)
		}
		v := float64(c.deadLettered[i].Load())
		dead.Metric = append(dead.Metric, &dto.Metric{Label: l.deadLetter[i], Counter: &dto.Counter{Value: &v}})
	}
	if lag := c.lag.family(l.connector); lag != nil {
		out = append(out, lag)
	}
	if n := c.logLinesDropped.Load(); n > 0 {
		name, help, v := FamilyLogLinesDropped, helpLogLinesDropped, float64(n)
		out = append(out, &dto.MetricFamily{Name: &name, Help: &help, Type: &counterType,
			Metric: []*dto.Metric{{Label: l.connector, Counter: &dto.Counter{Value: &v}}}})
	}
	if f := c.throttle.family(l.connector); f != nil {
		out = append(out, f)
	}
	if n := c.tapDropped.Load(); n > 0 {
		name, help, v := FamilyTapDropped, helpTapDropped, float64(n)
		out = append(out, &dto.MetricFamily{Name: &name, Help: &help, Type: &counterType,
			Metric: []*dto.Metric{{Label: l.connector, Counter: &dto.Counter{Value: &v}}}})
	}
	return out
}

// deadLetterStagesInSeriesOrder lists the dead-letter stage indices sorted by stage name.
var deadLetterStagesInSeriesOrder = func() []int {
	order := []int{0, 1, 2, 3, 4}
	sort.Slice(order, func(a, b int) bool { return DeadLetterStages[order[a]] < DeadLetterStages[order[b]] })
	return order
}()

// histogram reads the stage's histogram. The count is the sum of the buckets, so the buckets and
// the count always agree, even while an observation is being recorded.
func (st *stageCells) histogram() *dto.Histogram {
	buckets := make([]*dto.Bucket, numStageBuckets)
	counts := make([]uint64, numStageBuckets)
	var cumulative uint64
	for i := range numStageBuckets {
		cumulative += st.buckets[i].Load()
		counts[i] = cumulative
		buckets[i] = &dto.Bucket{CumulativeCount: &counts[i], UpperBound: &stageBucketBounds[i]}
	}
	count := cumulative + st.buckets[numStageBuckets].Load()
	sum := math.Float64frombits(st.sumBits.Load())
	return &dto.Histogram{SampleCount: &count, SampleSum: &sum, Bucket: buckets}
}
