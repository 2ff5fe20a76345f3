/*
 * iggy_connector.h - the C ABI of an Apache Iggy connector plugin.
 *
 * A connector plugin is a shared library that the connectors runtime loads with
 * dlopen. Upstream builds plugins in Rust with iggy_connector_sdk; this header
 * describes the same binary interface for anyone writing one in C, so that a C
 * plugin runs unchanged under both the upstream runtime and the Go runtime.
 *
 * Nothing structured is passed as a C struct: every structured value crosses as
 * a postcard-encoded byte buffer (see "Wire format" below).
 *
 * -------------------------------------------------------------------------
 * Sink plugin: export all four of
 *
 *   int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len,
 *                          iggy_log_cb log);
 *   int32_t iggy_sink_consume(uint32_t id,
 *                             const uint8_t *topic_meta, size_t topic_meta_len,
 *                             const uint8_t *msgs_meta, size_t msgs_meta_len,
 *                             const uint8_t *msgs, size_t msgs_len);
 *   int32_t iggy_sink_close(uint32_t id);
 *   const char *iggy_sink_version(void);
 *
 * Source plugin: export all five of
 *
 *   int32_t iggy_source_open(uint32_t id, const uint8_t *cfg, size_t cfg_len,
 *                            const uint8_t *state, size_t state_len,
 *                            iggy_log_cb log);
 *   int32_t iggy_source_handle_v2(uint32_t id, iggy_send_cb send);
 *   int32_t iggy_source_batch_result(uint32_t id, uint64_t batch_id,
 *                                    uint8_t result);
 *   int32_t iggy_source_close(uint32_t id);
 *   const char *iggy_source_version(void);
 *
 * Older source plugins (before the ack handshake) export instead
 *   int32_t iggy_source_handle(uint32_t id, iggy_legacy_send_cb send);
 * and no iggy_source_batch_result. Hosts detect them by the absence of
 * iggy_source_handle_v2 and run them without acknowledgements.
 *
 * -------------------------------------------------------------------------
 * Instance ids: the host hands out process-wide unique ids (never reused, shared
 * by every library). A plugin keeps its own table of instances by id; opening an
 * id that is already registered returns -1 and leaves the existing instance alone.
 *
 * Return codes (int32_t):
 *   open           0 opened; 1 the connector failed to open (config was valid);
 *                  -1 id already registered, or the config is not valid JSON /
 *                  not valid for this plugin.
 *   consume        0 consumed; 1 the connector failed; -1 unknown id or a
 *                  buffer that does not decode (nothing delivered).
 *   close          0 closed; -1 unknown id.
 *   handle_v2      0 poll loop started; -1 unknown id.
 *   batch_result   0 applied; -1 unknown id, no batch pending, wrong batch id,
 *                  result code not 0/1 (applied as NACK), or the loop stopped.
 *
 * Memory: every buffer the host passes (cfg, state, consume buffers) is valid only
 * during the call: copy what you keep. state == NULL means "no saved state"; a
 * non-NULL state with length 0 is an empty (corrupt) state. The buffer given to
 * the send callback belongs to the plugin and may be freed once the callback
 * returns. target/msg given to the log callback are not NUL-terminated. The
 * version string is static and never freed.
 *
 * Threads: open, consume, close and batch_result block the calling thread until
 * done. handle_v2 must return at once and run the poll loop on the plugin's own
 * thread(s). Never call back into the host from inside a host call in a way that
 * waits on the host (the host never re-enters the plugin from a callback either).
 * The log callback may be invoked from any thread, concurrently.
 *
 * -------------------------------------------------------------------------
 * Source poll loop (iggy_source_handle_v2), one batch in flight per instance:
 *   1. batch_id starts at 1 and grows by 1 per delivery attempt.
 *   2. Produce a batch (an encoded ProducedMessages, possibly with no messages),
 *      mark batch_id pending and call send(id, batch_id, buf, len).
 *   3. send returns non-zero: the host rejected the batch and will not answer;
 *      treat it as a NACK.
 *      send returns 0: wait for iggy_source_batch_result(id, batch_id, r) with
 *      r = 0 (ACK: the batch was delivered and its state persisted) or 1 (NACK).
 *      No answer within 30 s counts as a NACK; close() NACKs a pending batch.
 *   4. After a NACK wait min(100 ms * 2^(n-1), 5 s), n = consecutive NACKs; the
 *      5th consecutive NACK stops the loop for good. An ACK resets n.
 *   5. Only advance durable progress (the state you report) on ACK.
 * close(id) stops the loop, waits for it to finish, then closes the connector;
 * no send callback for that id arrives after close returns.
 *
 * -------------------------------------------------------------------------
 * Wire format: postcard 1.x (varints are unsigned LEB128, u8 is one raw byte,
 * strings/bytes are varint(length)+bytes, Option is 00 | 01 value, sequences
 * are varint(count)+elements, enums are varint(index)+payload).
 *
 *   Schema            varint: 0 json, 1 raw, 2 text, 3 proto, 4 flat_buffer, 5 avro
 *   TopicMetadata     stream: string, topic: string
 *   MessagesMetadata  partition_id: varint u32, current_offset: varint u64, schema
 *   RawMessages       schema, varint count, RawMessage...
 *   RawMessage        id: varint u128, offset, checksum, timestamp,
 *                     origin_timestamp: varint u64, headers: bytes (a separately
 *                     encoded HeaderMap, empty = none), payload: bytes
 *   ProducedMessages  schema, varint count, ProducedMessage..., state: Option<bytes>
 *   ProducedMessage   id: Option<u128>, checksum, timestamp, origin_timestamp:
 *                     Option<u64>, headers: Option<HeaderMap>, payload: bytes
 *   HeaderMap         varint count, then key, value, key, value... where each of
 *                     key and value is varint(kind 0..14) + string holding the
 *                     standard padded base64 of the raw value bytes. Kinds:
 *                     0 raw, 1 string, 2 bool, 3 i8, 4 i16, 5 i32, 6 i64, 7 i128,
 *                     8 u8, 9 u16, 10 u32, 11 u64, 12 u128, 13 f32, 14 f64.
 *   ConnectorState    bytes (opaque to the host; by SDK convention MessagePack)
 */
#ifndef IGGY_CONNECTOR_H
#define IGGY_CONNECTOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Log levels carried by the first argument of iggy_log_cb. */
enum iggy_log_level {
    IGGY_LOG_TRACE = 0,
    IGGY_LOG_DEBUG = 1,
    IGGY_LOG_INFO = 2,
    IGGY_LOG_WARN = 3,
    IGGY_LOG_ERROR = 4
};

/* Values of the result argument of iggy_source_batch_result. */
enum iggy_batch_result { IGGY_BATCH_ACK = 0, IGGY_BATCH_NACK = 1 };

/* Schema enum indexes, as encoded in postcard. */
enum iggy_schema {
    IGGY_SCHEMA_JSON = 0,
    IGGY_SCHEMA_RAW = 1,
    IGGY_SCHEMA_TEXT = 2,
    IGGY_SCHEMA_PROTO = 3,
    IGGY_SCHEMA_FLAT_BUFFER = 4,
    IGGY_SCHEMA_AVRO = 5
};

/* Host logger. target is the log site (e.g. a module path), msg the text. */
typedef void (*iggy_log_cb)(uint8_t level, const uint8_t *target, size_t target_len,
                            const uint8_t *msg, size_t msg_len);

/* Host batch intake: 0 = accepted (an iggy_source_batch_result follows),
 * non-zero = rejected (no answer follows). buf is only valid during the call. */
typedef int32_t (*iggy_send_cb)(uint32_t plugin_id, uint64_t batch_id, const uint8_t *buf,
                                size_t len);

/* Legacy host batch intake (no acknowledgement). */
typedef void (*iggy_legacy_send_cb)(uint32_t plugin_id, const uint8_t *buf, size_t len);

/* Timing constants of the poll loop handshake. */
#define IGGY_BATCH_RESULT_TIMEOUT_MS 30000
#define IGGY_NACK_RETRY_DELAY_MS 100
#define IGGY_MAX_NACK_RETRY_DELAY_MS 5000
#define IGGY_MAX_CONSECUTIVE_NACKS 5

/* The exported entry points. Declaring them here lets the compiler check a
 * plugin's definitions against the ABI; define only the ones of your role. */
#if defined(__GNUC__)
#define IGGY_EXPORT __attribute__((visibility("default")))
#else
#define IGGY_EXPORT
#endif

IGGY_EXPORT int32_t iggy_sink_open(uint32_t id, const uint8_t *cfg, size_t cfg_len, iggy_log_cb log);
IGGY_EXPORT int32_t iggy_sink_consume(uint32_t id, const uint8_t *topic_meta, size_t topic_meta_len,
                                      const uint8_t *msgs_meta, size_t msgs_meta_len,
                                      const uint8_t *msgs, size_t msgs_len);
IGGY_EXPORT int32_t iggy_sink_close(uint32_t id);
IGGY_EXPORT const char *iggy_sink_version(void);

IGGY_EXPORT int32_t iggy_source_open(uint32_t id, const uint8_t *cfg, size_t cfg_len,
                                     const uint8_t *state, size_t state_len, iggy_log_cb log);
IGGY_EXPORT int32_t iggy_source_handle_v2(uint32_t id, iggy_send_cb send);
IGGY_EXPORT int32_t iggy_source_batch_result(uint32_t id, uint64_t batch_id, uint8_t result);
IGGY_EXPORT int32_t iggy_source_handle(uint32_t id, iggy_legacy_send_cb send); /* legacy ABI */
IGGY_EXPORT int32_t iggy_source_close(uint32_t id);
IGGY_EXPORT const char *iggy_source_version(void);

#ifdef __cplusplus
}
#endif

#endif /* IGGY_CONNECTOR_H */
