package runner_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-connectors-go/runtime/pkg/codec"
	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/dryrun"
	"github.com/iggy-connectors-go/runtime/pkg/postcard"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
	"github.com/iggy-connectors-go/runtime/pkg/tap"
	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// recordingSinkC is a sink library, compiled by the test, that appends the three buffers of every
// consume call to the file of plugin_config {"file": path}, each as a little-endian u32 length and
// the bytes: exactly what the plugin was handed.
const recordingSinkC = `
#include "plugin_util.h"
#include <stdio.h>

typedef struct rec_sink { char path[1024]; } rec_sink;
static pu_table sinks = PU_TABLE_INIT;

int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, iggy_log_cb log) {
    pu_log_init(log);
    rec_sink *s = calloc(1, sizeof *s);
    if (!s) return -1;
    if (pu_json_string((pu_json){(const char *)cfg, cfg_len}, "file", s->path, sizeof s->path) != 1 ||
        pu_table_add(&sinks, id, s) != 0) {
        free(s);
        return -1;
    }
    return 0;
}

static void put(FILE *f, const uint8_t *b, size_t n) {
    uint8_t len[4] = {n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >> 24) & 0xff};
    fwrite(len, 1, 4, f);
    fwrite(b, 1, n, f);
}

int32_t iggy_sink_consume(uint32_t id, const uint8_t *tm, size_t tm_len, const uint8_t *mm,
                          size_t mm_len, const uint8_t *msgs, size_t msgs_len) {
    rec_sink *s = pu_table_acquire(&sinks, id);
    if (!s) return -1;
    FILE *f = fopen(s->path, "ab");
    if (f) {
        put(f, tm, tm_len);
        put(f, mm, mm_len);
        put(f, msgs, msgs_len);
        fclose(f);
    }
    pu_table_release(&sinks, id);
    return f ? 0 : -1;
}

int32_t iggy_sink_close(uint32_t id) {
    free(pu_table_remove(&sinks, id));
    return 0;
}

const char *iggy_sink_version(void) { return "0.1.0-recording"; }
`

// consumed is one message as the recording sink was handed it.
type consumed struct {
	topic postcard.TopicMetadata
	meta  postcard.MessagesMetadata
	msg   postcard.RawMessage
}

// readConsumed decodes the recording sink's file; a missing file is nothing consumed yet.
func readConsumed(t *testing.T, path string) []consumed {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	next := func() []byte {
		n := binary.LittleEndian.Uint32(data)
		b := data[4 : 4+n]
		data = data[4+n:]
		return b
	}
	var out []consumed
	for len(data) > 0 {
		tm, err := postcard.DecodeTopicMetadata(next())
		if err != nil {
			t.Fatal(err)
		}
		mm, err := postcard.DecodeMessagesMetadata(next())
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := postcard.DecodeRawMessages(next())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs.Messages {
			out = append(out, consumed{topic: tm, meta: mm, msg: m})
		}
	}
	return out
}

// A preview of the messages a topic holds (as a tap renders them when polled) shows exactly what
// a real sink runner's plugin receives for them with the same config, over every schema: the
// payload bytes, id, offset, timestamp and headers; the messages it cannot decode are the ones
// the plugin never gets.
func TestPreviewEqualsWhatThePluginReceives(t *testing.T) {
	testkit.OverProtocols(t, previewEqualsWhatThePluginReceives)
}

func previewEqualsWhatThePluginReceives(t *testing.T, protocol string) {
	lib := testkit.CompileC(t, recordingSinkC, "librecording_sink")
	for _, tc := range testkit.SinkCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithStream("dry", map[string]uint32{"in": 1}))
			env := baseEnvOver(protocol, srv, t.TempDir())

			// The messages, each with headers of several kinds and its own id.
			testkit.SendMessages(t, srv, "dry", "in", testkit.CaseMessages(t, tc.Payloads))

			// The samples: the topic's messages as a tap renders them at "polled".
			var samples bytes.Buffer
			for _, m := range readTopic(t, srv, "dry", "in") {
				e := tap.Event{Point: tap.PointPolled, Stream: "dry", Topic: "in", Offset: m.Header.Offset,
					ID: tap.IDBytes(m.Header.Id), Timestamp: m.Header.Timestamp}
				e.SetHeaders(sdkHeaders(t, m.UserHeaders))
				schema, _ := codec.ParseSchema(tc.Schema)
				e.SetPayload(schema, m.Payload, nil)
				line, err := tap.Marshal(&e)
				if err != nil {
					t.Fatal(err)
				}
				samples.Write(append(line, '\n'))
			}

			// The real sink runner and its plugin.
			out := filepath.Join(t.TempDir(), "consumed")
			cfg := tc.ConnectorTOML("rec", "rec", lib, "dry", "in", fmt.Sprintf("file = %q", out))
			sink := testkit.StartRunner(t, withConfig(env, cfg))

			// The preview: the runner binary's dry run, as iggy-connectors test and the preview
			// routes run it, with the same config.
			res, err := dryrun.Run(context.Background(), dryrun.Request{Runner: testkit.RunnerBinary(t),
				Env: []string{runnerproc.EnvConfig + "=" + cfg}, Samples: bytes.NewReader(samples.Bytes())})
			if err != nil || len(res.Problems) > 0 {
				t.Fatalf("dry run: %v %v\nsamples:\n%s", err, res.Problems, samples.String())
			}
			var delivered []string
			for _, line := range strings.Split(strings.TrimSpace(string(res.Output)), "\n") {
				if strings.HasPrefix(line, `{"point":"delivered"`) {
					delivered = append(delivered, line)
				} else if !strings.HasPrefix(line, `{"point":"failed"`) {
					t.Fatalf("unexpected preview line %s", line)
				}
			}
			if len(delivered) == 0 {
				t.Fatalf("nothing delivered in the preview:\n%s", res.Output)
			}

			// Every message was polled and settled (the undecodable ones dropped), so the plugin
			// has had all it will get.
			sink.WaitStatus(t, "running", waitLong)
			sink.WaitUntil(t, waitLong, "every message consumed", func() bool {
				s := sink.Stats(t)
				return s.MessagesConsumed != nil && *s.MessagesConsumed == uint64(len(tc.Payloads)) && len(readConsumed(t, out)) == len(delivered)
			})
			got := readConsumed(t, out)
			for i, line := range delivered {
				var preview tap.Event
				if err := json.Unmarshal([]byte(line), &preview); err != nil {
					t.Fatal(err)
				}
				c := got[i]
				label, _ := codec.ParseSchema(tc.Schema)
				if c.meta.Schema != label || c.topic.Stream != "dry" || c.topic.Topic != "in" {
					t.Fatalf("message %d reached the plugin as %+v %+v", i, c.topic, c.meta)
				}
				// The plugin's message rendered as the tap renders a delivered one, in the format
				// the preview names, compares byte for byte.
				e := tap.Event{Point: tap.PointDelivered, Stream: c.topic.Stream, Topic: c.topic.Topic, Partition: c.meta.PartitionID,
					Offset: c.msg.Offset, ID: tap.ID(c.msg.ID), Timestamp: c.msg.Timestamp}
				var hs postcard.HeaderMap
				if len(c.msg.Headers) > 0 {
					if hs, err = postcard.DecodeHeaderMap(c.msg.Headers); err != nil {
						t.Fatal(err)
					}
				}
				e.SetHeaders(hs)
				schema, _ := codec.ParseSchema(preview.Schema)
				e.SetPayload(schema, c.msg.Payload, config.SecretKeys(config.DefaultSecretKeys))
				received, err := tap.Marshal(&e)
				if err != nil {
					t.Fatal(err)
				}
				if string(received) != line {
					t.Errorf("message %d\nthe plugin got %s\nthe preview    %s", i, received, line)
				}
				// And the payload bytes themselves, where the rendering keeps them (a masked
				// secret's value aside: the line above compares the masked rendering).
				masked := strings.Contains(string(preview.Payload), `"`+config.MaskedValue+`"`)
				if preview.Encoding == "base64" {
					if b, _ := base64.StdEncoding.DecodeString(strings.Trim(string(preview.Payload), `"`)); !bytes.Equal(b, c.msg.Payload) {
						t.Errorf("message %d: the plugin got payload %q, the preview shows %q", i, c.msg.Payload, b)
					}
				} else if preview.Schema == "json" && !masked && !bytes.Equal(preview.Payload, c.msg.Payload) {
					t.Errorf("message %d: the plugin got payload %s, the preview shows %s", i, c.msg.Payload, preview.Payload)
				}
			}
			t.Logf("%d delivered messages compared, %d failed in the preview and never reached the plugin", len(delivered), len(tc.Payloads)-len(delivered))
			if t.Failed() {
				t.Logf("samples:\n%s\npreview:\n%s", samples.String(), res.Output)
			}
		})
	}
}

// sdkHeaders converts user headers as the SDK reads them to the postcard map the tap renders.
func sdkHeaders(t *testing.T, raw []byte) postcard.HeaderMap {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	hs, err := iggcon.DeserializeHeaders(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out postcard.HeaderMap
	for _, h := range hs {
		kk, ok1 := postcard.HeaderKindFromIggyCode(uint8(h.Key.Kind))
		vk, ok2 := postcard.HeaderKindFromIggyCode(uint8(h.Value.Kind))
		if !ok1 || !ok2 {
			t.Fatalf("header kinds %d, %d", h.Key.Kind, h.Value.Kind)
		}
		out = append(out, postcard.HeaderEntry{Key: postcard.HeaderField{Kind: kk, Value: h.Key.Value}, Value: postcard.HeaderField{Kind: vk, Value: h.Value.Value}})
	}
	return out
}

// A source's preview shows exactly the payloads a real source runner sends to Iggy for what its
// plugin produced, over every stream schema (the probe plugin of formats_probe_test.go produces
// the payloads, declared with the plugin schema).
func TestSourcePreviewEqualsWhatIggyGets(t *testing.T) {
	lib := probeLibrary(t)
	for _, tc := range testkit.SourceCases() {
		t.Run(tc.Name(), func(t *testing.T) {
			srv := testkit.StartBroker(t, testkit.WithStream("dry", map[string]uint32{"out": 1}))
			cfg := probeSourceTOML(t, lib, "dry", "out", tc.Stream, tc.StreamExtra, int(tc.Plugin), tc.Payloads, tc.Transforms)
			source := testkit.StartRunner(t, withConfig(baseEnv(srv, t.TempDir()), cfg))
			var got []iggcon.IggyMessage
			source.WaitUntil(t, waitLong, "every message sent", func() bool {
				got = readTopic(t, srv, "dry", "out")
				return len(got) >= len(tc.Payloads)
			})

			var samples bytes.Buffer
			for _, p := range tc.Payloads {
				e := tap.Event{Point: tap.PointProduced, ID: "0"}
				e.SetHeaders(nil)
				e.SetPayload(tc.Plugin, p, nil)
				line, _ := tap.Marshal(&e)
				samples.Write(append(line, '\n'))
			}
			res, err := dryrun.Run(context.Background(), dryrun.Request{Runner: testkit.RunnerBinary(t),
				Env: []string{runnerproc.EnvConfig + "=" + cfg}, Samples: &samples})
			if err != nil || len(res.Problems) > 0 {
				t.Fatalf("dry run: %v %v", err, res.Problems)
			}
			lines := strings.Split(strings.TrimSpace(string(res.Output)), "\n")
			if len(lines) != len(got) {
				t.Fatalf("preview has %d lines, Iggy got %d messages:\n%s", len(lines), len(got), res.Output)
			}
			for i, line := range lines {
				var e tap.Event
				if err := json.Unmarshal([]byte(line), &e); err != nil || e.Point != tap.PointSent || e.Schema != tc.Stream || e.Stream != "dry" || e.Topic != "out" {
					t.Fatalf("preview line %s: %v", line, err)
				}
				want := tap.Event{}
				want.SetPayload(mustSchema(t, tc.Stream), got[i].Payload, config.SecretKeys(config.DefaultSecretKeys))
				if string(want.Payload) != string(e.Payload) || want.Size != e.Size || want.Encoding != e.Encoding {
					t.Errorf("message %d: Iggy got %s (%d B), the preview shows %s (%d B)", i, want.Payload, want.Size, e.Payload, e.Size)
				}
			}
		})
	}
}

func mustSchema(t *testing.T, name string) postcard.Schema {
	t.Helper()
	s, err := codec.ParseSchema(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
