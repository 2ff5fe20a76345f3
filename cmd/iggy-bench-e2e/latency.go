package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// The latency cases: one stdout sink (print_payload = false) at poll_interval 5ms, fed from
// outside at a steady 20 messages a second, then single messages after long idle spells. A
// message's latency is the time from its send to the broker holding the group's offset of it
// (the sink stores it right after its plugin returned), read every millisecond. A is the runner
// before idle_after (with -before, the tree before's runner; else this one with idle_after = "0",
// which backs off after the first empty poll as before); B is this runner with the defaults.
// Interleaved A B A B, a fresh topic per measurement.

// latencyCase is one row pair of the latency table.
type latencyCase struct {
	name     string
	protocol string
}

func latencyCases() []latencyCase {
	return []latencyCase{{"latency-stdout-20", "0.8"}, {"latency-stdout-20-0.9", "0.9"}}
}

const (
	latencyStream   = "latency"
	latencyInterval = 50 * time.Millisecond // 20 msg/s
	// latencyIdleSpell is the quiet before each first-message sample: past the default
	// idle_after (1s) and the back-off's climb to idle_poll_max (5+5+10+...+160 ms, 250 ms).
	latencyIdleSpell  = 2500 * time.Millisecond
	latencyIdleSpread = 500 * time.Millisecond
)

// latencySide is A or B of a latency case.
type latencySide struct {
	label     string
	old       bool   // the runner of -before
	idleAfter string // the stream's idle_after; "" leaves it out
}

func latencySides(o options) [2]latencySide {
	a := latencySide{label: "A idle_after 0", idleAfter: "0"}
	if o.before != "" {
		a = latencySide{label: "A before", old: true}
	}
	return [2]latencySide{a, {label: "B default"}}
}

// latencyResult is one case's samples per side, over every round.
type latencyResult struct {
	c            latencyCase
	sides        [2]latencySide
	steady, idle [2][]time.Duration
}

func runLatencyCase(o options, work string, c latencyCase) (latencyResult, error) {
	res := latencyResult{c: c, sides: latencySides(o)}
	dir, b, err := caseBroker(o, work, c.name)
	if err != nil {
		return res, err
	}
	defer b.stop()
	if _, err := b.cli.CreateStream(latencyStream); err != nil {
		return res, fmt.Errorf("create stream: %w", err)
	}
	sender, err := b.client()
	if err != nil {
		return res, err
	}
	defer sender.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 1; round <= o.rounds; round++ {
		for i, side := range res.sides {
			steady, idle, err := measureLatency(o, dir, b, sender, rng, c, side, fmt.Sprintf("%c%d", side.label[0], round))
			if err != nil {
				return res, fmt.Errorf("round %d, %s: %w", round, side.label, err)
			}
			res.steady[i], res.idle[i] = append(res.steady[i], steady...), append(res.idle[i], idle...)
			if o.verbose {
				fmt.Printf("  %s round %d %s: steady p50 %s p99 %s, after idle %s\n", c.name, round, side.label,
					ms(percentile(steady, 50)), ms(percentile(steady, 99)), ms(percentile(idle, 50)))
			}
		}
	}
	return res, nil
}

// measureLatency runs one sink on a fresh topic and times the steady stream, then the messages
// after idle spells.
func measureLatency(o options, dir string, b *broker, sender iggcon.Client, rng *rand.Rand, c latencyCase, side latencySide, run string) (steady, idle []time.Duration, err error) {
	topic := "lat-" + run
	if err := b.createTopic(latencyStream, topic); err != nil {
		return nil, nil, err
	}
	bin := o.binDir
	if side.old {
		bin = o.before
	}
	runDir := filepath.Join(dir, "runner-"+run)
	if err := os.MkdirAll(filepath.Join(runDir, "state"), 0o755); err != nil {
		return nil, nil, err
	}
	sink := config.Connector{Kind: config.KindSink, Key: "lat", Enabled: true, Version: 1, Name: "latency sink",
		Path: filepath.Join(bin, "plugins", "libiggy_connector_stdout_sink.so"), PluginConfig: map[string]any{"print_payload": false},
		Streams: []config.StreamEntry{{Stream: latencyStream, Topics: []string{topic}, Schema: "json",
			Declared: config.StreamDeclared{PollInterval: ptr("5ms")}}}}
	if side.idleAfter != "" {
		sink.Streams[0].Declared.IdleAfter = ptr(side.idleAfter)
	}
	file, err := sink.MarshalTOML()
	if err != nil {
		return nil, nil, err
	}
	env := append([]string{
		"IGGY_CONNECTORS_IGGY_ADDRESS=" + b.addr, "IGGY_CONNECTORS_IGGY_USERNAME=" + username,
		"IGGY_CONNECTORS_IGGY_PASSWORD=" + password, "IGGY_CONNECTORS_IGGY_PROTOCOL=" + c.protocol,
		"IGGY_CONNECTORS_STATE_PATH=" + filepath.Join(runDir, "state"), "IGGY_CONNECTOR_CONFIG=" + string(file),
	}, o.runnerEnv...)
	r, err := startRunner(bin, runDir, env)
	if err != nil {
		return nil, nil, err
	}
	defer r.stop() //nolint:errcheck // the measurement is done
	if err := r.waitRunning(); err != nil {
		return nil, nil, err
	}
	group := config.DefaultConsumerGroup("lat")
	p := &latencyProbe{b: b, topic: topic, group: group}
	msg, err := iggcon.NewIggyMessage([]byte(`{"latency":"probe"}`))
	if err != nil {
		return nil, nil, err
	}
	send := func() (time.Time, error) {
		at := time.Now()
		return at, sender.SendMessages(ident(latencyStream), ident(topic), iggcon.PartitionId(0), []iggcon.IggyMessage{msg})
	}
	// Warm up: the first message is delivered before the measurement starts.
	at, err := send()
	if err != nil {
		return nil, nil, err
	}
	if _, err := p.await(0, at); err != nil {
		return nil, nil, err
	}
	if steady, err = p.steady(send, o.latencyMessages); err != nil {
		return nil, nil, err
	}
	next := uint64(o.latencyMessages + 1)
	for range o.latencyIdle {
		time.Sleep(latencyIdleSpell + time.Duration(rng.Int64N(int64(latencyIdleSpread))))
		at, err := send()
		if err != nil {
			return nil, nil, err
		}
		d, err := p.await(next, at)
		if err != nil {
			return nil, nil, err
		}
		idle, next = append(idle, d), next+1
	}
	return steady, idle, nil
}

// latencyProbe reads the group's stored offset of one topic.
type latencyProbe struct {
	b            *broker
	topic, group string
}

// await waits until offset is stored and returns the time since at.
func (p *latencyProbe) await(offset uint64, at time.Time) (time.Duration, error) {
	deadline := at.Add(runLimit)
	for {
		off, ok, err := p.b.storedOffset(latencyStream, p.topic, p.group)
		if err != nil {
			return 0, err
		}
		if ok && off >= offset {
			return time.Since(at), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("offset %d not stored within %s", offset, runLimit)
		}
		time.Sleep(deliveryProbe)
	}
}

// steady sends n messages 50 ms apart (offsets 1..n) while it reads the stored offset every
// millisecond, and returns each message's latency.
func (p *latencyProbe) steady(send func() (time.Time, error), n int) ([]time.Duration, error) {
	var mu sync.Mutex
	sent := make([]time.Time, 0, n)
	errc := make(chan error, 1)
	go func() {
		t := time.NewTicker(latencyInterval)
		defer t.Stop()
		for range n {
			<-t.C
			at, err := send()
			if err != nil {
				errc <- err
				return
			}
			mu.Lock()
			sent = append(sent, at)
			mu.Unlock()
		}
		errc <- nil
	}()
	out := make([]time.Duration, 0, n)
	deadline := time.Now().Add(time.Duration(n)*latencyInterval + runLimit)
	for len(out) < n {
		off, ok, err := p.b.storedOffset(latencyStream, p.topic, p.group)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		mu.Lock()
		for ok && len(out) < len(sent) && uint64(len(out)+1) <= off {
			out = append(out, now.Sub(sent[len(out)]))
		}
		mu.Unlock()
		select {
		case err := <-errc:
			if err != nil {
				return nil, err
			}
		default:
		}
		if now.After(deadline) {
			return nil, fmt.Errorf("%d of %d messages stored in time", len(out), n)
		}
		time.Sleep(deliveryProbe)
	}
	return out, nil
}

// printLatencyTable prints two rows per latency case: the steady stream's p50 / p90 / p99 and
// the first message after an idle spell (median / max), over every round's samples.
func printLatencyTable(results []latencyResult) {
	if len(results) == 0 {
		return
	}
	fmt.Printf("\n%-24s %-16s %-30s %s\n", "latency case", "side", "steady 20 msg/s p50/p90/p99", "after a 2.5-3 s idle spell med/max")
	fmt.Println(strings.Repeat("-", 110))
	for _, r := range results {
		for i, side := range r.sides {
			name := r.c.name
			if i > 0 {
				name = ""
			}
			s, idle := r.steady[i], r.idle[i]
			fmt.Printf("%-24s %-16s %-30s %s / %s\n", name, side.label,
				fmt.Sprintf("%s / %s / %s", ms(percentile(s, 50)), ms(percentile(s, 90)), ms(percentile(s, 99))),
				ms(percentile(idle, 50)), ms(percentile(idle, 100)))
		}
	}
}
