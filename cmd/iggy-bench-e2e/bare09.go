package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient"
)

// measureBare09 is the bare side of the 0.9 cases: our own 0.9 client doing the runner's Iggy
// work without decoding or a plugin, as drainGroup and sendAll do with the 0.8 SDK.
func (e *caseEnv) measureBare09(round int) (sample, error) {
	ctx := context.Background()
	cli, err := iggyclient.Dial(ctx, iggyclient.Options{Address: e.broker.addr, Username: username, Password: password,
		Protocol: iggyclient.Protocol09, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return sample{}, fmt.Errorf("dial 0.9: %w", err)
	}
	defer cli.Close()
	n := e.opts.sinkMessages
	var elapsed time.Duration
	cpu0 := selfCPU()
	if e.c.kind == sourceCase {
		n = e.opts.sourceMessages
		topic := fmt.Sprintf("bare-%d", round)
		if err := e.broker.createTopic(stream, topic); err != nil {
			return sample{}, err
		}
		msgs := outMessages(e.batch)
		cpu0 = selfCPU()
		start := time.Now()
		if err := sendAllOver09(ctx, cli, topic, msgs, n); err != nil {
			return sample{}, err
		}
		elapsed = time.Since(start)
		if err := e.broker.deleteTopic(stream, topic); err != nil {
			return sample{}, err
		}
	} else if elapsed, err = drainGroup09(ctx, cli, fmt.Sprintf("bare-%d", round), n); err != nil {
		return sample{}, err
	}
	return sample{rate: float64(n) / elapsed.Seconds(), cpuPerMsg: (selfCPU() - cpu0) / time.Duration(n)}, nil
}

// sendAll09 fills the topic's partition 0 with n messages over 0.9, cycling through batch, as
// sendAll does over 0.8.
func sendAll09(addr, topic string, batch []iggcon.IggyMessage, n int) error {
	ctx := context.Background()
	cli, err := iggyclient.Dial(ctx, iggyclient.Options{Address: addr, Username: username, Password: password,
		Protocol: iggyclient.Protocol09, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("dial 0.9: %w", err)
	}
	defer cli.Close()
	return sendAllOver09(ctx, cli, topic, outMessages(batch), n)
}

// sendAllOver09 sends n messages to the topic's partition 0, cycling through msgs.
func sendAllOver09(ctx context.Context, cli iggyclient.Client, topic string, msgs []iggyclient.OutMessage, n int) error {
	to := iggyclient.Partitioning{Kind: iggyclient.PartitionByID, PartitionID: 0}
	for sent := 0; sent < n; sent += len(msgs) {
		if err := cli.Send(ctx, stream, topic, to, msgs[:min(len(msgs), n-sent)]); err != nil {
			return fmt.Errorf("send to %s over 0.9: %w", topic, err)
		}
	}
	return nil
}

// outMessages is batch as our client's messages.
func outMessages(batch []iggcon.IggyMessage) []iggyclient.OutMessage {
	msgs := make([]iggyclient.OutMessage, len(batch))
	for i, m := range batch {
		msgs[i] = iggyclient.OutMessage{ID: m.Header.Id, Payload: m.Payload}
	}
	return msgs
}

// drainGroup09 polls the group's next batch into reused buffers and stores its last offset after
// each batch.
func drainGroup09(ctx context.Context, cli iggyclient.Client, group string, n int) (time.Duration, error) {
	if err := cli.EnsureConsumerGroup(ctx, stream, sinkTopic09, group); err != nil {
		return 0, fmt.Errorf("join group %s: %w", group, err)
	}
	var buf iggyclient.PollBuffers
	start := time.Now()
	for read := 0; read < n; {
		b, err := cli.Poll(ctx, iggyclient.PollRequest{Stream: stream, Topic: sinkTopic09, Group: group, Count: batchSize, Reuse: &buf})
		if err != nil {
			return 0, fmt.Errorf("poll: %w", err)
		}
		if len(b.Messages) == 0 {
			continue
		}
		read += len(b.Messages)
		if err := cli.StoreOffset(ctx, stream, sinkTopic09, group, b.PartitionID, b.Messages[len(b.Messages)-1].Offset); err != nil {
			return 0, fmt.Errorf("store offset: %w", err)
		}
	}
	return time.Since(start), nil
}
