/*
 * fault.c - a fault-injection connector (sink and source in one library) for
 * reliability tests. Every fault is chosen by the plugin config; with no keys it
 * behaves well.
 *
 * Both roles:
 *   open_code       int   returned by open (1 keeps the instance registered, as upstream)
 *   open_hang       bool  open never returns
 *   close_code      int   returned by close (the instance is removed anyway)
 *   close_hang      bool  close never returns
 *   crash_on_batch  N     SIGSEGV (a real null-pointer write) at the N-th consume / produced batch
 *   hang_on_batch   N     block forever at the N-th consume / produced batch (ignores close)
 *   sleep_ms        N     sleep this long in every consume / poll
 *   log_lines       N     log N extra lines per consume / batch ("log heavily")
 *   log_level       str   their level: "trace", "debug", "info" (default), "warn" or "error"
 * Sink only:
 *   consume_code        int  returned by consume ...
 *   consume_fail_count  N    ... for the first N consumes only (0 or absent: always)
 *   fail_payload_contains str consume returns consume_code (1 when unset) for any batch
 *                            holding a payload that contains this text ("poison")
 * Source only (JSON payloads {"seq":N} with id N+1 and a header seq=u64):
 *   messages_per_batch  N     default 10
 *   max_messages        N     stop producing after N messages in total (0: never)
 *   after_max           str   "idle" (empty batches, default), "hang" or "crash"
 *   interval_ms         N     pause before each batch, default 10
 *   payload_size        N     pad each payload to about N bytes ({"seq":N,"pad":"xx..."})
 *   handle_code         int   returned by handle_v2 without starting the loop when non-zero
 *   fail_batch_result   bool  the on_batch_result hook fails, which stops the loop
 *   bad_payload_every   N     every N-th message (seq N-1, 2N-1, ...) is malformed JSON:
 *                             {"seq":N,"bad": (cut short)
 *   hang_batch_result   bool  the on_batch_result hook never returns
 * The source keeps {messages_produced: N} (MessagePack 91 xx) as its state and
 * rewinds to the last ACKed sequence on NACK, so a NACKed batch is produced again.
 *
 * Compiled with -DLEGACY_ABI it exports the pre-ack source ABI instead:
 * iggy_source_handle(id, legacy_send) and no iggy_source_handle_v2 /
 * iggy_source_batch_result.
 */
#include "plugin_util.h"

#include <signal.h>

#define TARGET "iggy_connector_fault"
#define SINK_TARGET "iggy_connector_sdk::sink"
#define SOURCE_TARGET "iggy_connector_sdk::source"
#define VERSION "0.1.0-fault"

/* Kept volatile so the compiler cannot prove the write faults and replace it. */
static int *volatile fault_null_pointer;

static void crash_now(uint32_t id, uint64_t batch) {
    pu_log(IGGY_LOG_ERROR, TARGET, "fault connector with ID: %u crashing at batch %llu", id,
           (unsigned long long)batch);
    *fault_null_pointer = 1;
    raise(SIGSEGV); /* not reached */
}

static void hang_forever(uint32_t id, const char *where) {
    pu_log(IGGY_LOG_WARN, TARGET, "fault connector with ID: %u hanging in %s", id, where);
    for (;;) pause();
}

typedef struct fault_config {
    int64_t open_code, close_code, consume_code, handle_code;
    int open_hang, close_hang, fail_batch_result, hang_batch_result;
    uint64_t crash_on_batch, hang_on_batch, sleep_ms, log_lines, consume_fail_count;
    uint64_t messages_per_batch, max_messages, interval_ms, payload_size, bad_payload_every;
    char after_max[16];
    char fail_payload_contains[128];
    char log_level[8];
    uint8_t noise_level; /* log_level as the ABI's level byte */
} fault_config;

/* Parses the config; returns the offending key or NULL. */
static const char *parse_config(pu_json cfg, fault_config *c) {
    memset(c, 0, sizeof *c);
    c->messages_per_batch = 10;
    c->interval_ms = 10;
    strcpy(c->after_max, "idle");
    if (!pu_json_is_object(cfg)) return "(config is not a JSON object)";
#define I64(k) if (pu_json_i64(cfg, #k, &c->k) < 0) return #k
#define U64(k) if (pu_json_u64(cfg, #k, &c->k) < 0) return #k
#define BOOL(k) if (pu_json_bool(cfg, #k, &c->k) < 0) return #k
    I64(open_code); I64(close_code); I64(consume_code); I64(handle_code);
    BOOL(open_hang); BOOL(close_hang); BOOL(fail_batch_result); BOOL(hang_batch_result);
    U64(crash_on_batch); U64(hang_on_batch); U64(sleep_ms); U64(log_lines);
    U64(consume_fail_count); U64(messages_per_batch); U64(max_messages); U64(interval_ms);
    U64(payload_size); U64(bad_payload_every);
#undef I64
#undef U64
#undef BOOL
    if (pu_json_string(cfg, "after_max", c->after_max, sizeof c->after_max) < 0) return "after_max";
    if (strcmp(c->after_max, "idle") && strcmp(c->after_max, "hang") &&
        strcmp(c->after_max, "crash"))
        return "after_max";
    if (pu_json_string(cfg, "fail_payload_contains", c->fail_payload_contains,
                       sizeof c->fail_payload_contains) < 0)
        return "fail_payload_contains";
    strcpy(c->log_level, "info");
    if (pu_json_string(cfg, "log_level", c->log_level, sizeof c->log_level) < 0) return "log_level";
    int level = pu_log_level_word(c->log_level);
    if (level < 0 || level > IGGY_LOG_ERROR) return "log_level";
    c->noise_level = (uint8_t)level;
    return NULL;
}

/* Faults shared by both roles at the start of batch number `batch` (1-based). */
static void batch_faults(const fault_config *c, uint32_t id, uint64_t batch) {
    if (c->crash_on_batch && batch == c->crash_on_batch) crash_now(id, batch);
    if (c->hang_on_batch && batch == c->hang_on_batch) hang_forever(id, "batch");
    if (c->sleep_ms) pu_sleep_ms(c->sleep_ms);
    for (uint64_t i = 1; i <= c->log_lines; i++)
        pu_log(c->noise_level, TARGET, "fault connector with ID: %u noise line %llu of batch %llu",
               id, (unsigned long long)i, (unsigned long long)batch);
}

/* ================================================================ sink */

typedef struct fault_sink {
    uint32_t id;
    fault_config cfg;
    _Atomic uint64_t batches;
    _Atomic uint64_t messages;
} fault_sink;

static pu_table sinks = PU_TABLE_INIT;

int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, iggy_log_cb log) {
    if (pu_table_contains(&sinks, id)) return -1;
    pu_log_init(log);
    fault_sink *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->id = id;
    const char *bad = parse_config((pu_json){(const char *)cfg, cfg_len}, &s->cfg);
    if (bad) {
        pu_log(IGGY_LOG_ERROR, SINK_TARGET,
               "Failed to parse configuration for sink connector with ID: %u. invalid key %s", id,
               bad);
        free(s);
        return -1;
    }
    if (s->cfg.open_hang) hang_forever(id, "open");
    int32_t code = (int32_t)s->cfg.open_code;
    if (code == -1 || pu_table_add(&sinks, id, s) != 0) {
        free(s);
        return -1;
    }
    pu_log(IGGY_LOG_INFO, TARGET, "Opened fault sink connector with ID: %u, open code: %d", id,
           code);
    return code;
}

/* Whether any payload of the batch contains text. Reads a copy of the reader, so the
 * batch itself is left unread. */
static int batch_has_poison(const pu_consume *c, const char *text) {
    pu_consume scan = *c;
    size_t n = strlen(text);
    for (uint64_t i = 0; i < scan.count; i++) {
        pu_raw_message m;
        pu_consume_next(&scan, &m);
        if (m.payload_len >= n && memmem(m.payload, m.payload_len, text, n)) return 1;
    }
    return 0;
}

int32_t iggy_sink_consume(uint32_t id, const uint8_t *topic_meta, size_t topic_meta_len,
                          const uint8_t *msgs_meta, size_t msgs_meta_len, const uint8_t *msgs,
                          size_t msgs_len) {
    pu_consume c;
    fault_sink *s = pu_sink_consume_begin(&sinks, id, TARGET, &c, topic_meta, topic_meta_len,
                                          msgs_meta, msgs_meta_len, msgs, msgs_len);
    if (!s) return -1;
    uint64_t batch = ++s->batches;
    batch_faults(&s->cfg, id, batch);
    s->messages += c.count;
    int32_t code = 0;
    if (s->cfg.fail_payload_contains[0] && batch_has_poison(&c, s->cfg.fail_payload_contains)) {
        code = s->cfg.consume_code ? (int32_t)s->cfg.consume_code : 1;
        pu_log(IGGY_LOG_ERROR, SINK_TARGET,
               "Failed to consume messages by sink connector with ID: %u from stream: %.*s, "
               "topic: %.*s. a payload contains \"%s\" (code %d)",
               id, (int)c.stream_len, c.stream, (int)c.topic_len, c.topic,
               s->cfg.fail_payload_contains, code);
    } else if (s->cfg.consume_code &&
        (s->cfg.consume_fail_count == 0 || batch <= s->cfg.consume_fail_count)) {
        code = (int32_t)s->cfg.consume_code;
        pu_log(IGGY_LOG_ERROR, SINK_TARGET,
               "Failed to consume messages by sink connector with ID: %u from stream: %.*s, "
               "topic: %.*s. injected fault (code %d)",
               id, (int)c.stream_len, c.stream, (int)c.topic_len, c.topic, code);
    } else {
        pu_log(IGGY_LOG_INFO, TARGET,
               "Fault sink with ID: %u consumed batch %llu with %llu messages, offset: %llu", id,
               (unsigned long long)batch, (unsigned long long)c.count,
               (unsigned long long)c.current_offset);
    }
    pu_table_release(&sinks, id);
    return code;
}

int32_t iggy_sink_close(uint32_t id) {
    fault_sink *s = pu_sink_close_begin(&sinks, id, TARGET);
    if (!s) return -1;
    if (s->cfg.close_hang) hang_forever(id, "close");
    int32_t code = (int32_t)s->cfg.close_code;
    pu_log(IGGY_LOG_INFO, TARGET, "Fault sink with ID: %u closed after %llu batches, %llu messages",
           id, (unsigned long long)s->batches, (unsigned long long)s->messages);
    free(s);
    return code;
}

const char *iggy_sink_version(void) { return VERSION; }

/* ================================================================ source */

typedef struct fault_source {
    uint32_t id;
    fault_config cfg;
    pu_loop loop;
    pthread_mutex_t mu;
    uint64_t acked;       /* messages produced and acknowledged: the state */
    uint64_t next_seq;    /* next sequence to produce */
    uint64_t batches;     /* batches produced */
} fault_source;

static pu_table sources = PU_TABLE_INIT;

static void put_state(pu_buf *out, uint64_t n) {
    pu_put_u8(out, 0x91);
    if (n < 128) {
        pu_put_u8(out, (uint8_t)n);
    } else {
        pu_put_u8(out, 0xCF);
        for (int s = 56; s >= 0; s -= 8) pu_put_u8(out, (uint8_t)(n >> s));
    }
}

static int get_state(const uint8_t *p, size_t n, uint64_t *out) {
    if (n == 2 && p[0] == 0x91 && p[1] < 0x80) {
        *out = p[1];
        return 0;
    }
    if (n == 10 && p[0] == 0x91 && p[1] == 0xCF) {
        uint64_t v = 0;
        for (int i = 2; i < 10; i++) v = v << 8 | p[i];
        *out = v;
        return 0;
    }
    return -1;
}

static int source_poll(void *ctx, pu_loop *loop, pu_buf *out, const char **why) {
    fault_source *s = ctx;
    (void)why;
    if (pu_loop_sleep(loop, s->cfg.interval_ms)) return 0;
    pthread_mutex_lock(&s->mu);
    uint64_t batch = ++s->batches;
    uint64_t seq = s->next_seq;
    pthread_mutex_unlock(&s->mu);
    batch_faults(&s->cfg, s->id, batch);

    uint64_t count = s->cfg.messages_per_batch;
    if (s->cfg.max_messages) {
        if (seq >= s->cfg.max_messages) {
            if (!strcmp(s->cfg.after_max, "crash")) crash_now(s->id, batch);
            if (!strcmp(s->cfg.after_max, "hang")) hang_forever(s->id, "poll");
            count = 0;
        } else if (count > s->cfg.max_messages - seq) {
            count = s->cfg.max_messages - seq;
        }
    }
    pu_put_varint(out, IGGY_SCHEMA_JSON);
    pu_put_varint(out, count);
    pu_buf scratch = {0};
    for (uint64_t i = 0; i < count; i++) {
        uint64_t n = seq + i;
        pu_put_u8(out, 1);
        pu_put_u128(out, 0, n + 1); /* id: Some(seq + 1) */
        pu_put_u8(out, 0);          /* checksum: None */
        pu_put_u8(out, 1);          /* timestamp: Some(now) */
        pu_put_varint(out, pu_unix_micros());
        pu_put_u8(out, 0); /* origin_timestamp: None */
        pu_put_u8(out, 1); /* headers: Some({String "seq": Uint64 n}) */
        pu_put_varint(out, 1);
        pu_put_varint(out, 1);
        scratch.len = 0;
        pu_b64_encode(&scratch, (const uint8_t *)"seq", 3);
        pu_put_bytes(out, scratch.data, scratch.len);
        pu_put_varint(out, 11);
        uint8_t le[8];
        for (int k = 0; k < 8; k++) le[k] = (uint8_t)(n >> (8 * k));
        scratch.len = 0;
        pu_b64_encode(&scratch, le, 8);
        pu_put_bytes(out, scratch.data, scratch.len);
        char head[48];
        int len = snprintf(head, sizeof head, "{\"seq\":%llu", (unsigned long long)n);
        if (s->cfg.bad_payload_every && (n + 1) % s->cfg.bad_payload_every == 0) {
            static const char bad[] = ",\"bad\":"; /* the value never comes: malformed JSON */
            pu_put_varint(out, (uint64_t)len + sizeof bad - 1);
            pu_put_raw(out, head, (size_t)len);
            pu_put_raw(out, bad, sizeof bad - 1);
            continue;
        }
        size_t pad = s->cfg.payload_size > (uint64_t)len + 10 ? s->cfg.payload_size - (size_t)len - 10 : 0;
        if (pad == 0) {
            pu_put_varint(out, (uint64_t)len + 1);
            pu_put_raw(out, head, (size_t)len);
        } else {
            pu_put_varint(out, (uint64_t)len + 10 + pad);
            pu_put_raw(out, head, (size_t)len);
            pu_put_raw(out, ",\"pad\":\"", 8);
            pu_buf_reserve(out, pad);
            memset(out->data + out->len, 'x', pad);
            out->len += pad;
            pu_put_u8(out, '"');
        }
        pu_put_u8(out, '}');
    }
    pu_buf_free(&scratch);
    pthread_mutex_lock(&s->mu);
    s->next_seq = seq + count;
    pthread_mutex_unlock(&s->mu);
    if (count > 0) {
        pu_buf state = {0};
        put_state(&state, seq + count);
        pu_put_u8(out, 1);
        pu_put_bytes(out, state.data, state.len);
        pu_buf_free(&state);
    } else {
        pu_put_u8(out, 0);
    }
    return 0;
}

static int source_on_result(void *ctx, uint8_t result) {
    fault_source *s = ctx;
    if (s->cfg.fail_batch_result) return -1;
    if (s->cfg.hang_batch_result) hang_forever(s->id, "batch result");
    pthread_mutex_lock(&s->mu);
    if (result == IGGY_BATCH_ACK)
        s->acked = s->next_seq;
    else
        s->next_seq = s->acked; /* produce the rejected messages again */
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static const pu_source_ops source_ops = {source_poll, source_on_result};

int32_t iggy_source_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, const uint8_t *state,
                         size_t state_len, iggy_log_cb log) {
    if (pu_table_contains(&sources, id)) return -1;
    pu_log_init(log);
    fault_source *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->id = id;
    const char *bad = parse_config((pu_json){(const char *)cfg, cfg_len}, &s->cfg);
    if (bad) {
        pu_log(IGGY_LOG_ERROR, SOURCE_TARGET,
               "Failed to parse configuration for source connector with ID: %u. invalid key %s",
               id, bad);
        free(s);
        return -1;
    }
    if (s->cfg.open_hang) hang_forever(id, "open");
    if (state) {
        if (get_state(state, state_len, &s->acked) == 0)
            pu_log(IGGY_LOG_INFO, TARGET,
                   "Restored state for fault source connector with ID: %u. Messages produced: %llu",
                   id, (unsigned long long)s->acked);
        else
            pu_log(IGGY_LOG_WARN, TARGET,
                   "Failed to deserialize state for fault source connector with ID: %u", id);
    }
    s->next_seq = s->acked;
    pthread_mutex_init(&s->mu, NULL);
    pu_loop_init(&s->loop, id, SOURCE_TARGET, s, &source_ops);
    int32_t code = (int32_t)s->cfg.open_code;
    if (code == -1 || pu_table_add(&sources, id, s) != 0) {
        pu_loop_destroy(&s->loop);
        free(s);
        return -1;
    }
    pu_log(IGGY_LOG_INFO, TARGET, "Opened fault source connector with ID: %u, open code: %d", id,
           code);
    return code;
}

static int32_t start_loop(uint32_t id, iggy_send_cb send, iggy_legacy_send_cb legacy_send) {
    fault_source *s = pu_table_acquire(&sources, id);
    if (!s) {
        pu_log(IGGY_LOG_ERROR, SOURCE_TARGET,
               "Source connector with ID: %u is not initialized - cannot handle.", id);
        return -1;
    }
    int32_t rc = (int32_t)s->cfg.handle_code;
    if (rc == 0) rc = pu_loop_start(&s->loop, send, legacy_send);
    pu_table_release(&sources, id);
    return rc;
}

#ifdef LEGACY_ABI
int32_t iggy_source_handle(uint32_t id, iggy_legacy_send_cb send) {
    return start_loop(id, NULL, send);
}
#else
int32_t iggy_source_handle_v2(uint32_t id, iggy_send_cb send) { return start_loop(id, send, NULL); }

int32_t iggy_source_batch_result(uint32_t id, uint64_t batch_id, uint8_t result) {
    fault_source *s = pu_table_acquire(&sources, id);
    if (!s) {
        pu_log(IGGY_LOG_ERROR, SOURCE_TARGET, "Source connector with ID: %u is not initialized.",
               id);
        return -1;
    }
    int32_t rc = pu_loop_batch_result(&s->loop, batch_id, result);
    pu_table_release(&sources, id);
    return rc;
}
#endif

int32_t iggy_source_close(uint32_t id) {
    fault_source *s = pu_table_remove(&sources, id);
    if (!s) {
        pu_log(IGGY_LOG_ERROR, TARGET,
               "Source connector with ID: %u was not found and cannot be closed.", id);
        return -1;
    }
    if (s->cfg.close_hang) hang_forever(id, "close");
    pu_log(IGGY_LOG_INFO, SOURCE_TARGET, "Closing source connector with ID: %u...", id);
    pu_loop_stop(&s->loop);
    int32_t code = (int32_t)s->cfg.close_code;
    pu_log(IGGY_LOG_INFO, TARGET,
           "Fault source with ID: %u closed. Acknowledged messages: %llu, batches: %llu", id,
           (unsigned long long)s->acked, (unsigned long long)s->batches);
    pu_loop_destroy(&s->loop);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return code;
}

const char *iggy_source_version(void) { return VERSION; }
