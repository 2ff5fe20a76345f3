/*
 * stdout_sink.c - the C twin of upstream's iggy_connector_stdout_sink.
 *
 * Logs one line per consume call (and, with "print_payload": true, one line per
 * message) through the host's log callback, which the runtime prints. Config
 * keys and log lines follow upstream's stdout sink.
 */
#include "plugin_util.h"

#define TARGET "iggy_connector_stdout_sink"
#define SDK_TARGET "iggy_connector_sdk::sink"
#define VERSION "0.5.0-edge.4"

typedef struct stdout_sink {
    uint32_t id;
    int print_payload;
    pthread_mutex_t mu;
    uint64_t invocations;
} stdout_sink;

static pu_table instances = PU_TABLE_INIT;

int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, iggy_log_cb log) {
    if (pu_table_contains(&instances, id)) return -1;
    pu_log_init(log);
    pu_json config = {(const char *)cfg, cfg_len};
    int print_payload = 0;
    if (!pu_utf8_valid(cfg, cfg_len)) {
        pu_log(IGGY_LOG_ERROR, SDK_TARGET,
               "Failed to read configuration for sink connector with ID: %u", id);
        return -1;
    }
    if (!pu_json_is_object(config) || pu_json_bool(config, "print_payload", &print_payload) < 0) {
        pu_log(IGGY_LOG_ERROR, SDK_TARGET,
               "Failed to parse configuration for sink connector with ID: %u. expected an object "
               "with optional boolean print_payload",
               id);
        return -1;
    }
    stdout_sink *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->id = id;
    s->print_payload = print_payload;
    pthread_mutex_init(&s->mu, NULL);
    if (pu_table_add(&instances, id, s) != 0) {
        free(s);
        return -1;
    }
    pu_log(IGGY_LOG_INFO, TARGET, "Opened stdout sink connector with ID: %u, print payload: %s", id,
           print_payload ? "true" : "false");
    return 0;
}

static void print_message(const stdout_sink *s, uint32_t schema, const pu_raw_message *m) {
    const char *text = (const char *)m->payload;
    int n = (int)m->payload_len;
    switch (schema) {
    case IGGY_SCHEMA_JSON:
        pu_log(IGGY_LOG_INFO, TARGET, "Message offset: %llu, payload: Json(%.*s)",
               (unsigned long long)m->offset, n, text);
        break;
    case IGGY_SCHEMA_TEXT:
        pu_log(IGGY_LOG_INFO, TARGET, "Message offset: %llu, payload: Text(\"%.*s\")",
               (unsigned long long)m->offset, n, text);
        break;
    default:
        pu_log(IGGY_LOG_INFO, TARGET, "Message offset: %llu, payload: %s(%zu bytes)",
               (unsigned long long)m->offset, schema == IGGY_SCHEMA_PROTO ? "Proto" : "Raw",
               m->payload_len);
        break;
    }
    (void)s;
}

int32_t iggy_sink_consume(uint32_t id, const uint8_t *topic_meta, size_t topic_meta_len,
                          const uint8_t *msgs_meta, size_t msgs_meta_len, const uint8_t *msgs,
                          size_t msgs_len) {
    pu_consume c;
    stdout_sink *s = pu_sink_consume_begin(&instances, id, TARGET, &c, topic_meta, topic_meta_len,
                                           msgs_meta, msgs_meta_len, msgs, msgs_len);
    if (!s) return -1;
    /* First pass: count the messages upstream would deliver (bad ones are dropped). */
    pu_consume pass = c;
    uint64_t delivered = 0;
    for (uint64_t i = 0; i < c.count; i++) {
        pu_raw_message m;
        pu_consume_next(&pass, &m);
        const char *part;
        const char *problem = pu_message_problem(c.schema, &m, &part);
        if (problem) {
            pu_log(IGGY_LOG_ERROR, SDK_TARGET,
                   "Failed to decode message %s by sink connector with ID: %u from stream: %.*s, "
                   "topic: %.*s. %s",
                   part, id,
                   (int)c.stream_len, c.stream, (int)c.topic_len, c.topic, problem);
            continue;
        }
        delivered++;
    }
    pthread_mutex_lock(&s->mu);
    uint64_t invocation = ++s->invocations;
    pthread_mutex_unlock(&s->mu);
    pu_log(IGGY_LOG_INFO, TARGET,
           "Stdout sink with ID: %u received: %llu messages, schema: %s, stream: %.*s, topic: "
           "%.*s, partition: %u, offset: %llu, invocation: %llu",
           id, (unsigned long long)delivered, pu_schema_name(c.schema), (int)c.stream_len,
           c.stream, (int)c.topic_len, c.topic, c.partition_id,
           (unsigned long long)c.current_offset, (unsigned long long)invocation);
    if (s->print_payload) {
        for (uint64_t i = 0; i < c.count; i++) {
            pu_raw_message m;
            pu_consume_next(&c, &m);
            const char *part;
            if (!pu_message_problem(c.schema, &m, &part)) print_message(s, c.schema, &m);
        }
    }
    pu_table_release(&instances, id);
    return 0;
}

int32_t iggy_sink_close(uint32_t id) {
    stdout_sink *s = pu_sink_close_begin(&instances, id, TARGET);
    if (!s) return -1;
    pu_log(IGGY_LOG_INFO, SDK_TARGET, "Closing sink connector with ID: %u...", id);
    pu_log(IGGY_LOG_INFO, TARGET, "Stdout sink connector with ID: %u is closed.", id);
    pu_log(IGGY_LOG_INFO, SDK_TARGET, "Closed sink connector with ID: %u", id);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return 0;
}

const char *iggy_sink_version(void) { return VERSION; }
