/*
 * null_sink.c - a sink that decodes, counts and discards, for benchmarks.
 *
 * Each consume validates all three buffers (so the host's encoding is checked)
 * and adds to the instance's counters; close logs the totals:
 *   "Null sink with ID: <id> consumed <n> messages in <b> batches, <p> payload bytes"
 * Config: any JSON object (no keys).
 */
#include "plugin_util.h"

#define TARGET "iggy_connector_null_sink"
#define SDK_TARGET "iggy_connector_sdk::sink"
#define VERSION "0.1.0"

typedef struct null_sink {
    _Atomic uint64_t messages, batches, payload_bytes;
} null_sink;

static pu_table instances = PU_TABLE_INIT;

int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, iggy_log_cb log) {
    if (pu_table_contains(&instances, id)) return -1;
    pu_log_init(log);
    if (!pu_json_is_object((pu_json){(const char *)cfg, cfg_len})) {
        pu_log(IGGY_LOG_ERROR, SDK_TARGET,
               "Failed to parse configuration for sink connector with ID: %u. expected an object",
               id);
        return -1;
    }
    null_sink *s = calloc(1, sizeof *s);
    if (!s) return -1;
    if (pu_table_add(&instances, id, s) != 0) {
        free(s);
        return -1;
    }
    pu_log(IGGY_LOG_INFO, TARGET, "Opened null sink connector with ID: %u", id);
    return 0;
}

int32_t iggy_sink_consume(uint32_t id, const uint8_t *topic_meta, size_t topic_meta_len,
                          const uint8_t *msgs_meta, size_t msgs_meta_len, const uint8_t *msgs,
                          size_t msgs_len) {
    pu_consume c;
    null_sink *s = pu_sink_consume_begin(&instances, id, TARGET, &c, topic_meta, topic_meta_len,
                                         msgs_meta, msgs_meta_len, msgs, msgs_len);
    if (!s) return -1;
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < c.count; i++) {
        pu_raw_message m;
        pu_consume_next(&c, &m);
        bytes += m.payload_len;
    }
    s->messages += c.count;
    s->batches += 1;
    s->payload_bytes += bytes;
    pu_table_release(&instances, id);
    return 0;
}

int32_t iggy_sink_close(uint32_t id) {
    null_sink *s = pu_sink_close_begin(&instances, id, TARGET);
    if (!s) return -1;
    pu_log(IGGY_LOG_INFO, TARGET,
           "Null sink with ID: %u consumed %llu messages in %llu batches, %llu payload bytes", id,
           (unsigned long long)s->messages, (unsigned long long)s->batches,
           (unsigned long long)s->payload_bytes);
    free(s);
    return 0;
}

const char *iggy_sink_version(void) { return VERSION; }
