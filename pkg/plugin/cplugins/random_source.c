/*
 * random_source.c - the C twin of upstream's iggy_connector_random_source.
 *
 * Every `interval` it produces a random number of JSON records
 *   {"id":"<uuid v4>","title":"Hello","name":"World","text":"<payload_size alphanumerics>"}
 * until `max_count` messages were produced in total. The total is the
 * connector's state, MessagePack of {messages_produced: N} in compact array
 * form (91 2A for 42) exactly like upstream, so state files interoperate. The
 * total advances only when the host ACKs a batch, so a reopened source continues
 * where the last acknowledged batch ended.
 *
 * Config keys (all optional, as upstream): interval ("1s"), max_count (none),
 * messages_range ([10, 50], upper bound exclusive), payload_size (100).
 */
#include "plugin_util.h"

#define TARGET "iggy_connector_random_source"
#define SDK_TARGET "iggy_connector_sdk::source"
#define CONNECTOR_NAME "Random source"
#define VERSION "0.5.0-edge.4"

typedef struct random_source {
    uint32_t id;
    uint64_t interval_ms;
    int has_max_count;
    uint64_t max_count;
    uint64_t range_lo, range_hi;
    uint64_t payload_size;
    pu_rng rng;
    pu_loop loop;

    pthread_mutex_t mu;
    uint64_t messages_produced; /* acknowledged total: the state */
    int has_pending;
    uint64_t pending_produced; /* total if the in-flight batch is ACKed */
} random_source;

static pu_table instances = PU_TABLE_INIT;

/* ---- state: MessagePack of struct State { messages_produced: usize } ---- */

static void encode_state(pu_buf *out, uint64_t n) {
    pu_put_u8(out, 0x91); /* fixarray of 1: serde's compact struct form */
    if (n < 128) {
        pu_put_u8(out, (uint8_t)n);
    } else if (n <= 0xFF) {
        pu_put_u8(out, 0xCC);
        pu_put_u8(out, (uint8_t)n);
    } else if (n <= 0xFFFF) {
        pu_put_u8(out, 0xCD);
        for (int s = 8; s >= 0; s -= 8) pu_put_u8(out, (uint8_t)(n >> s));
    } else if (n <= 0xFFFFFFFFULL) {
        pu_put_u8(out, 0xCE);
        for (int s = 24; s >= 0; s -= 8) pu_put_u8(out, (uint8_t)(n >> s));
    } else {
        pu_put_u8(out, 0xCF);
        for (int s = 56; s >= 0; s -= 8) pu_put_u8(out, (uint8_t)(n >> s));
    }
}

/* Reads a MessagePack unsigned integer (or non-negative signed one). */
static int decode_msgpack_uint(pu_reader *r, uint64_t *out) {
    uint8_t tag = pu_get_u8(r);
    int width = 0;
    int is_signed = 0;
    if (r->err) return -1;
    if (tag < 0x80) {
        *out = tag;
        return 0;
    }
    switch (tag) {
    case 0xCC: width = 1; break;
    case 0xCD: width = 2; break;
    case 0xCE: width = 4; break;
    case 0xCF: width = 8; break;
    case 0xD0: width = 1; is_signed = 1; break;
    case 0xD1: width = 2; is_signed = 1; break;
    case 0xD2: width = 4; is_signed = 1; break;
    case 0xD3: width = 8; is_signed = 1; break;
    default: return -1;
    }
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = v << 8 | pu_get_u8(r);
    if (r->err) return -1;
    if (is_signed && (v >> (width * 8 - 1)) & 1) return -1; /* negative */
    *out = v;
    return 0;
}

/* Accepts the compact array form [N] and the named map form
 * {"messages_produced": N}, as rmp_serde does. */
static int decode_state(const uint8_t *p, size_t n, uint64_t *out) {
    pu_reader r = pu_reader_new(p, n);
    uint8_t tag = pu_get_u8(&r);
    if (r.err) return -1;
    if (tag == 0x91) return decode_msgpack_uint(&r, out);
    if (tag == 0x81) {
        uint8_t key_tag = pu_get_u8(&r);
        static const char key[] = "messages_produced";
        if (r.err || key_tag != (0xA0 | (sizeof key - 1))) return -1;
        for (size_t i = 0; i < sizeof key - 1; i++)
            if (pu_get_u8(&r) != (uint8_t)key[i]) return -1;
        return decode_msgpack_uint(&r, out);
    }
    return -1;
}

/* ---- message generation ---- */

static void put_uuid_v4(pu_buf *out, pu_rng *rng) {
    uint8_t b[16];
    uint64_t a = pu_rng_next(rng), c = pu_rng_next(rng);
    memcpy(b, &a, 8);
    memcpy(b + 8, &c, 8);
    b[6] = (b[6] & 0x0F) | 0x40;
    b[8] = (b[8] & 0x3F) | 0x80;
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) pu_put_u8(out, '-');
        pu_put_u8(out, (uint8_t)hex[b[i] >> 4]);
        pu_put_u8(out, (uint8_t)hex[b[i] & 15]);
    }
}

static void put_record(pu_buf *out, random_source *s) {
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    pu_put_raw(out, "{\"id\":\"", 7);
    put_uuid_v4(out, &s->rng);
    static const char mid[] = "\",\"title\":\"Hello\",\"name\":\"World\",\"text\":\"";
    pu_put_raw(out, mid, sizeof mid - 1);
    pu_buf_reserve(out, s->payload_size + 2);
    for (uint64_t i = 0; i < s->payload_size; i++)
        out->data[out->len++] = (uint8_t)alnum[pu_rng_next(&s->rng) % 62];
    pu_put_raw(out, "\"}", 2);
}

static int poll_batch(void *ctx, pu_loop *loop, pu_buf *out, const char **why) {
    random_source *s = ctx;
    (void)why;
    if (pu_loop_sleep(loop, s->interval_ms)) return 0;
    pthread_mutex_lock(&s->mu);
    uint64_t produced = s->messages_produced;
    pthread_mutex_unlock(&s->mu);

    pu_put_varint(out, IGGY_SCHEMA_JSON);
    if (s->has_max_count && produced >= s->max_count) {
        pu_log(IGGY_LOG_INFO, TARGET,
               "Reached max number of %llu messages for " CONNECTOR_NAME
               " connector with ID: %u",
               (unsigned long long)s->max_count, s->id);
        pu_put_varint(out, 0); /* no messages */
        pu_put_u8(out, 0);     /* state: None */
        return 0;
    }
    uint64_t count = pu_rng_range(&s->rng, s->range_lo, s->range_hi);
    if (s->has_max_count && count > s->max_count - produced) count = s->max_count - produced;

    pu_put_varint(out, count);
    pu_buf record = {0};
    for (uint64_t i = 0; i < count; i++) {
        pu_put_u8(out, 0); /* id: None */
        pu_put_u8(out, 0); /* checksum: None */
        pu_put_u8(out, 0); /* timestamp: None */
        pu_put_u8(out, 0); /* origin_timestamp: None */
        pu_put_u8(out, 0); /* headers: None */
        record.len = 0;
        put_record(&record, s);
        pu_put_bytes(out, record.data, record.len);
    }
    pu_buf_free(&record);

    uint64_t candidate = produced + count;
    pu_buf state = {0};
    encode_state(&state, candidate);
    pu_put_u8(out, 1); /* state: Some */
    pu_put_bytes(out, state.data, state.len);
    pu_buf_free(&state);

    pthread_mutex_lock(&s->mu);
    s->has_pending = 1;
    s->pending_produced = candidate;
    pthread_mutex_unlock(&s->mu);
    pu_log(IGGY_LOG_INFO, TARGET,
           CONNECTOR_NAME " connector with ID: %u generated %llu messages. Total produced: %llu",
           s->id, (unsigned long long)count, (unsigned long long)candidate);
    return 0;
}

static int on_batch_result(void *ctx, uint8_t result) {
    random_source *s = ctx;
    pthread_mutex_lock(&s->mu);
    if (result == IGGY_BATCH_ACK && s->has_pending) s->messages_produced = s->pending_produced;
    s->has_pending = 0;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static const pu_source_ops ops = {poll_batch, on_batch_result};

/* ---- exported ABI ---- */

int32_t iggy_source_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, const uint8_t *state,
                         size_t state_len, iggy_log_cb log) {
    if (pu_table_contains(&instances, id)) return -1;
    pu_log_init(log);
    pu_json config = {(const char *)cfg, cfg_len};
    if (!pu_utf8_valid(cfg, cfg_len)) {
        pu_log(IGGY_LOG_ERROR, SDK_TARGET,
               "Failed to read configuration for source connector with ID: %u", id);
        return -1;
    }
    char interval[64] = "1s";
    uint64_t max_count = 0, lo = 10, hi = 50, payload_size = 100;
    int has_max = 0;
    int bad = !pu_json_is_object(config) ||
              pu_json_string(config, "interval", interval, sizeof interval) < 0 ||
              (has_max = pu_json_u64(config, "max_count", &max_count)) < 0 ||
              pu_json_u64_pair(config, "messages_range", &lo, &hi) < 0 ||
              pu_json_u64(config, "payload_size", &payload_size) < 0 || lo > UINT32_MAX ||
              hi > UINT32_MAX || payload_size > UINT32_MAX;
    if (bad) {
        pu_log(IGGY_LOG_ERROR, SDK_TARGET,
               "Failed to parse configuration for source connector with ID: %u", id);
        return -1;
    }
    random_source *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->id = id;
    if (pu_parse_duration(interval, &s->interval_ms) != 0) s->interval_ms = 1000;
    s->has_max_count = has_max;
    s->max_count = max_count;
    s->range_lo = lo;
    s->range_hi = hi;
    s->payload_size = payload_size;
    pu_rng_seed(&s->rng, id);
    pthread_mutex_init(&s->mu, NULL);
    if (state) {
        uint64_t produced;
        if (decode_state(state, state_len, &produced) == 0) {
            s->messages_produced = produced;
            pu_log(IGGY_LOG_INFO, TARGET,
                   "Restored state for " CONNECTOR_NAME
                   " connector with ID: %u. Messages produced: %llu",
                   id, (unsigned long long)produced);
        } else {
            pu_log(IGGY_LOG_WARN, TARGET,
                   "Failed to deserialize state for " CONNECTOR_NAME
                   " connector with ID: %u. invalid MessagePack state",
                   id);
        }
    }
    pu_loop_init(&s->loop, id, SDK_TARGET, s, &ops);
    if (pu_table_add(&instances, id, s) != 0) {
        pu_loop_destroy(&s->loop);
        free(s);
        return -1;
    }
    char max_text[32] = "None";
    if (has_max) snprintf(max_text, sizeof max_text, "Some(%llu)", (unsigned long long)max_count);
    pu_log(IGGY_LOG_INFO, TARGET,
           "Opened random source connector with ID: %u. Interval: %s, max offset: %s, messages "
           "range: %llu - %llu, payload size: %llu",
           id, interval, max_text, (unsigned long long)lo, (unsigned long long)hi,
           (unsigned long long)payload_size);
    return 0;
}

int32_t iggy_source_handle_v2(uint32_t id, iggy_send_cb send) {
    random_source *s = pu_table_acquire(&instances, id);
    if (!s) {
        pu_log(IGGY_LOG_ERROR, SDK_TARGET,
               "Source connector with ID: %u is not initialized - cannot handle.", id);
        return -1;
    }
    int32_t rc = pu_loop_start(&s->loop, send, NULL);
    pu_table_release(&instances, id);
    return rc;
}

int32_t iggy_source_batch_result(uint32_t id, uint64_t batch_id, uint8_t result) {
    random_source *s = pu_table_acquire(&instances, id);
    if (!s) {
        pu_log(IGGY_LOG_ERROR, SDK_TARGET, "Source connector with ID: %u is not initialized.", id);
        return -1;
    }
    int32_t rc = pu_loop_batch_result(&s->loop, batch_id, result);
    pu_table_release(&instances, id);
    return rc;
}

int32_t iggy_source_close(uint32_t id) {
    random_source *s = pu_table_remove(&instances, id);
    if (!s) {
        pu_log(IGGY_LOG_ERROR, TARGET,
               "Source connector with ID: %u was not found and cannot be closed.", id);
        return -1;
    }
    pu_log(IGGY_LOG_INFO, SDK_TARGET, "Closing source connector with ID: %u...", id);
    pu_loop_stop(&s->loop);
    pu_log(IGGY_LOG_INFO, SDK_TARGET, "Shutting down source connector with ID: %u", id);
    pu_log(IGGY_LOG_INFO, TARGET,
           CONNECTOR_NAME " connector with ID: %u closed. Total messages produced: %llu", id,
           (unsigned long long)s->messages_produced);
    pu_log(IGGY_LOG_INFO, SDK_TARGET, "Closed source connector with ID: %u", id);
    pu_loop_destroy(&s->loop);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return 0;
}

const char *iggy_source_version(void) { return VERSION; }
