package metrics

import (
	"sort"
	"strconv"
	"sync/atomic"

	dto "github.com/prometheus/client_model/go"
)

// MaxLagPartitions is how many partitions' consumer lag one connector's cells hold. A sink reading
// more partitions than that (over all its topics) shows the first ones it polled; SetLag reports
// the others as not recorded, and their lag is in neither /metrics nor /stats.
const MaxLagPartitions = 64

// lagNameBytes holds a stream and a topic name: Iggy allows 255 bytes for each.
const lagNameBytes = 512

// lagCells are a sink's consumer lag per partition, in the shared layout: a table filled in the
// order partitions are first polled. An entry's names and partition are written before count
// makes it visible and never change afterwards (until a new runner attaches and starts the table
// over), so readers need no lock.
type lagCells struct {
	count   atomic.Uint64 // entries in use
	entries [MaxLagPartitions]lagEntry
}

type lagEntry struct {
	partition atomic.Uint64
	lag       atomic.Uint64
	nameLens  atomic.Uint64 // len(stream) | len(topic) << 16
	names     [lagNameBytes / 8]atomic.Uint64
}

// lagKey names one partition of a connector.
type lagKey struct {
	stream, topic string
	partition     uint32
}

// lagSeries is one entry as read.
type lagSeries struct {
	key lagKey
	lag uint64
}

// reset empties the table (a new runner attached: the previous runner's partitions may not be its).
func (l *lagCells) reset() { l.count.Store(0) }

// add appends a new entry and returns its index, or -1 when the table is full. Only one goroutine
// may add at a time.
func (l *lagCells) add(k lagKey, lag uint64) int {
	i := int(l.count.Load())
	if i >= MaxLagPartitions {
		return -1
	}
	e := &l.entries[i]
	stream := cutUTF8(k.stream, lagNameBytes/2)
	topic := cutUTF8(k.topic, lagNameBytes/2)
	storeText(e.names[:], stream+topic)
	e.nameLens.Store(uint64(len(stream)) | uint64(len(topic))<<16)
	e.partition.Store(uint64(k.partition))
	e.lag.Store(lag)
	l.count.Store(uint64(i + 1))
	return i
}

// read returns every visible entry.
func (l *lagCells) read() []lagSeries {
	n := min(int(l.count.Load()), MaxLagPartitions)
	out := make([]lagSeries, 0, n)
	for i := range n {
		e := &l.entries[i]
		lens := e.nameLens.Load()
		ls, lt := int(lens&0xffff), int(lens>>16&0xffff)
		if ls+lt > lagNameBytes {
			continue // not a table this build wrote
		}
		names := loadText(e.names[:], ls+lt)
		out = append(out, lagSeries{
			key: lagKey{stream: names[:ls], topic: names[ls:], partition: uint32(e.partition.Load())},
			lag: e.lag.Load(),
		})
	}
	return out
}

// total is the sum over the partitions, nil before the first poll recorded any.
func (l *lagCells) total() *uint64 {
	series := l.read()
	if len(series) == 0 {
		return nil
	}
	var sum uint64
	for _, s := range series {
		sum += s.lag
	}
	return &sum
}

// family renders the table as the consumer lag gauge, nil when it is empty. Labels and series are
// sorted as a Prometheus registry sorts them (by label name, then by label values as text).
func (l *lagCells) family(connector []*dto.LabelPair) *dto.MetricFamily {
	series := l.read()
	if len(series) == 0 {
		return nil
	}
	metrics := make([]*dto.Metric, len(series))
	for i, s := range series {
		v := float64(s.lag)
		labels := append(connector[:2:2], labelPair(LabelPartition, strconv.FormatUint(uint64(s.key.partition), 10)),
			labelPair(LabelStream, s.key.stream), labelPair(LabelTopic, s.key.topic))
		metrics[i] = &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: &v}}
	}
	sort.SliceStable(metrics, func(a, b int) bool {
		la, lb := metrics[a].Label, metrics[b].Label
		for i := range la {
			if la[i].GetValue() != lb[i].GetValue() {
				return la[i].GetValue() < lb[i].GetValue()
			}
		}
		return false
	})
	name, help, gauge := FamilyConsumerLag, helpConsumerLag, dto.MetricType_GAUGE
	return &dto.MetricFamily{Name: &name, Help: &help, Type: &gauge, Metric: metrics}
}

// SetLag records a sink's consumer lag on one partition: the messages on it after the last one
// this runner polled. It reports false when the partition is not recorded because the table
// already holds MaxLagPartitions others.
func (c *Connector) SetLag(stream, topic string, partition uint32, lag uint64) bool {
	k := lagKey{stream: stream, topic: topic, partition: partition}
	c.lagMu.Lock()
	defer c.lagMu.Unlock()
	if i, ok := c.lagIndex[k]; ok {
		c.c.lag.entries[i].lag.Store(lag)
		return true
	}
	i := c.c.lag.add(k, lag)
	if i < 0 {
		return false
	}
	c.lagIndex[k] = i
	return true
}
