/*
 * plugin_util.h - single-header helpers shared by the example C connector plugins.
 *
 * Everything here is static inline so each plugin .c compiles on its own:
 *   - pu_buf / pu_put_*     growable byte buffer and postcard writers
 *   - pu_reader / pu_get_*  bounds-checked postcard readers (never read past the end)
 *   - pu_b64_*              standard padded base64 (header keys and values)
 *   - pu_json_*             a tiny JSON validator and top-level config reader
 *   - pu_parse_duration     humantime-style durations ("100ms", "1s", "1m 30s")
 *   - pu_log                logging through the host's log callback
 *   - pu_table              id -> instance table with in-flight reference counts
 *   - pu_loop               the v2 source poll loop with the ACK/NACK handshake
 *   - pu_consume / pu_sink_* decoding a sink batch; the common start of consume and close
 *   - pu_rng                xorshift random numbers
 * See iggy_connector.h for the ABI itself.
 */
#ifndef IGGY_PLUGIN_UTIL_H
#define IGGY_PLUGIN_UTIL_H

#include "iggy_connector.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- buffer */

typedef struct pu_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} pu_buf;

static inline void pu_buf_reserve(pu_buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) abort(); /* out of memory: nothing sensible left to do */
    b->data = p;
    b->cap = cap;
}

static inline void pu_buf_free(pu_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static inline void pu_put_u8(pu_buf *b, uint8_t v) {
    pu_buf_reserve(b, 1);
    b->data[b->len++] = v;
}

static inline void pu_put_raw(pu_buf *b, const void *p, size_t n) {
    if (n == 0) return;
    pu_buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void pu_put_varint(pu_buf *b, uint64_t v) {
    pu_buf_reserve(b, 10);
    while (v >= 0x80) {
        b->data[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->data[b->len++] = (uint8_t)v;
}

/* u128 as (hi, lo) halves, minimal LEB128. */
static inline void pu_put_u128(pu_buf *b, uint64_t hi, uint64_t lo) {
    pu_buf_reserve(b, 19);
    for (;;) {
        uint8_t byte = (uint8_t)(lo & 0x7F);
        lo = (lo >> 7) | (hi << 57);
        hi >>= 7;
        if (hi == 0 && lo == 0) {
            b->data[b->len++] = byte;
            return;
        }
        b->data[b->len++] = byte | 0x80;
    }
}

static inline void pu_put_bytes(pu_buf *b, const void *p, size_t n) {
    pu_put_varint(b, n);
    pu_put_raw(b, p, n);
}

static inline void pu_put_str(pu_buf *b, const char *s) { pu_put_bytes(b, s, strlen(s)); }

/* ---------------------------------------------------------------- reader */

typedef struct pu_reader {
    const uint8_t *p;
    size_t len;
    size_t pos;
    const char *err; /* first error, NULL while all is well */
} pu_reader;

static inline pu_reader pu_reader_new(const uint8_t *p, size_t len) {
    pu_reader r = {p, len, 0, NULL};
    return r;
}

static inline void pu_fail(pu_reader *r, const char *why) {
    if (!r->err) r->err = why;
}

static inline uint8_t pu_get_u8(pu_reader *r) {
    if (r->err) return 0;
    if (r->pos >= r->len) {
        pu_fail(r, "unexpected end of input");
        return 0;
    }
    return r->p[r->pos++];
}

/* Unsigned LEB128 of at most max_bytes; the last allowed byte may carry at most
 * last_max (postcard rejects overflowing encodings). */
static inline uint64_t pu_get_varint_n(pu_reader *r, int max_bytes, uint8_t last_max) {
    uint64_t v = 0;
    for (int i = 0; i < max_bytes; i++) {
        uint8_t byte = pu_get_u8(r);
        if (r->err) return 0;
        if (i == max_bytes - 1) {
            if (byte > last_max) {
                pu_fail(r, "varint overflow");
                return 0;
            }
        }
        v |= (uint64_t)(byte & 0x7F) << (7 * i);
        if (!(byte & 0x80)) return v;
    }
    pu_fail(r, "varint overflow");
    return 0;
}

static inline uint64_t pu_get_u64(pu_reader *r) { return pu_get_varint_n(r, 10, 0x01); }
static inline uint32_t pu_get_u32(pu_reader *r) { return (uint32_t)pu_get_varint_n(r, 5, 0x0F); }

static inline void pu_get_u128(pu_reader *r, uint64_t *hi, uint64_t *lo) {
    unsigned __int128 v = 0;
    *hi = *lo = 0;
    for (int i = 0; i < 19; i++) {
        if (r->pos >= r->len) {
            pu_fail(r, "unexpected end of input");
            return;
        }
        uint8_t byte = r->p[r->pos++];
        if (i == 18 && byte > 0x03) {
            pu_fail(r, "varint overflow");
            return;
        }
        v |= (unsigned __int128)(byte & 0x7F) << (7 * i);
        if (!(byte & 0x80)) {
            *hi = (uint64_t)(v >> 64);
            *lo = (uint64_t)v;
            return;
        }
    }
}

/* A length-prefixed byte string, returned as a view into the input. */
static inline const uint8_t *pu_get_bytes(pu_reader *r, size_t *n) {
    uint64_t len = pu_get_u64(r);
    *n = 0;
    if (r->err) return NULL;
    if (len > r->len - r->pos) {
        pu_fail(r, "length prefix beyond end of input");
        return NULL;
    }
    const uint8_t *p = r->p + r->pos;
    r->pos += (size_t)len;
    *n = (size_t)len;
    return p;
}

static inline int pu_utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) {
            need = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + need >= n) return 0; /* truncated sequence */
        for (size_t k = 1; k <= need; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += need + 1;
    }
    return 1;
}

static inline const uint8_t *pu_get_str(pu_reader *r, size_t *n) {
    const uint8_t *p = pu_get_bytes(r, n);
    if (p && !pu_utf8_valid(p, *n)) {
        pu_fail(r, "invalid UTF-8");
        return NULL;
    }
    return p;
}

/* ---------------------------------------------------------------- base64 */

static const char pu_b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static inline void pu_b64_encode(pu_buf *out, const uint8_t *p, size_t n) {
    pu_buf_reserve(out, (n + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out->data[out->len++] = pu_b64_alphabet[v >> 18];
        out->data[out->len++] = pu_b64_alphabet[(v >> 12) & 63];
        out->data[out->len++] = pu_b64_alphabet[(v >> 6) & 63];
        out->data[out->len++] = pu_b64_alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        out->data[out->len++] = pu_b64_alphabet[v >> 18];
        out->data[out->len++] = pu_b64_alphabet[(v >> 12) & 63];
        out->data[out->len++] = '=';
        out->data[out->len++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        out->data[out->len++] = pu_b64_alphabet[v >> 18];
        out->data[out->len++] = pu_b64_alphabet[(v >> 12) & 63];
        out->data[out->len++] = pu_b64_alphabet[(v >> 6) & 63];
        out->data[out->len++] = '=';
    }
}

static inline int pu_b64_value(uint8_t c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes padded or unpadded standard base64 into out; returns 0 or -1. */
static inline int pu_b64_decode(pu_buf *out, const uint8_t *s, size_t n) {
    if (n % 4 == 0 && n >= 1 && s[n - 1] == '=') n--;
    if (n % 4 == 3 && n >= 1 && s[n - 1] == '=') n--;
    if (n % 4 == 1) return -1;
    pu_buf_reserve(out, n / 4 * 3 + 3);
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = pu_b64_value(s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out->data[out->len++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc != 0) return -1; /* non-canonical trailing bits */
    return 0;
}

/* ---------------------------------------------------------------- header map */

/* Validates an encoded HeaderMap (count, then kind+base64 string per key and
 * value) and returns the number of entries, or -1 with r->err set. */
static inline long pu_check_header_map(pu_reader *r) {
    uint64_t count = pu_get_u64(r);
    pu_buf scratch = {0};
    for (uint64_t i = 0; i < count && !r->err; i++) {
        for (int field = 0; field < 2 && !r->err; field++) {
            uint32_t kind = pu_get_u32(r);
            if (!r->err && kind > 14) pu_fail(r, "unknown header kind");
            size_t n;
            const uint8_t *s = pu_get_str(r, &n);
            scratch.len = 0;
            if (!r->err && pu_b64_decode(&scratch, s, n) != 0) pu_fail(r, "invalid base64");
        }
    }
    pu_buf_free(&scratch);
    return r->err ? -1 : (long)count;
}

/* ---------------------------------------------------------------- JSON */

static inline const char *pu_json_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static inline const char *pu_json_skip_string(const char *p, const char *end) {
    if (p >= end || *p != '"') return NULL;
    p++;
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        if (c == '\\') {
            p++;
            if (p >= end) return NULL;
            if (*p == 'u') {
                for (int i = 0; i < 4; i++) {
                    p++;
                    if (p >= end || !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
                                      (*p >= 'A' && *p <= 'F')))
                        return NULL;
                }
            } else if (!strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
        p++;
    }
    return NULL;
}

static inline const char *pu_json_skip_number(const char *p, const char *end) {
    const char *start = p;
    if (p < end && *p == '-') p++;
    if (p >= end) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') p++;
    } else {
        return NULL;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    return p > start ? p : NULL;
}

/* Returns the end of the JSON value starting at p (after leading whitespace),
 * or NULL if it is not valid JSON. depth bounds nesting. */
static inline const char *pu_json_skip_value(const char *p, const char *end, int depth) {
    p = pu_json_ws(p, end);
    if (p >= end || depth > 128) return NULL;
    switch (*p) {
    case '"':
        return pu_json_skip_string(p, end);
    case '{':
        p = pu_json_ws(p + 1, end);
        if (p < end && *p == '}') return p + 1;
        for (;;) {
            p = pu_json_skip_string(pu_json_ws(p, end), end);
            if (!p) return NULL;
            p = pu_json_ws(p, end);
            if (p >= end || *p != ':') return NULL;
            p = pu_json_skip_value(p + 1, end, depth + 1);
            if (!p) return NULL;
            p = pu_json_ws(p, end);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == '}') return p + 1;
            return NULL;
        }
    case '[':
        p = pu_json_ws(p + 1, end);
        if (p < end && *p == ']') return p + 1;
        for (;;) {
            p = pu_json_skip_value(p, end, depth + 1);
            if (!p) return NULL;
            p = pu_json_ws(p, end);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == ']') return p + 1;
            return NULL;
        }
    case 't':
        return (end - p >= 4 && !memcmp(p, "true", 4)) ? p + 4 : NULL;
    case 'f':
        return (end - p >= 5 && !memcmp(p, "false", 5)) ? p + 5 : NULL;
    case 'n':
        return (end - p >= 4 && !memcmp(p, "null", 4)) ? p + 4 : NULL;
    default:
        return pu_json_skip_number(p, end);
    }
}

/* 1 if the whole buffer is one valid JSON document. */
static inline int pu_json_valid(const char *p, size_t n) {
    const char *end = p + n;
    const char *q = pu_json_skip_value(p, end, 0);
    return q && pu_json_ws(q, end) == end;
}

/* A configuration object: the JSON text of the plugin's config. */
typedef struct pu_json {
    const char *p;
    size_t n;
} pu_json;

/* 1 if cfg is a valid JSON object (what a struct config needs). */
static inline int pu_json_is_object(pu_json cfg) {
    const char *start = pu_json_ws(cfg.p, cfg.p + cfg.n);
    return pu_json_valid(cfg.p, cfg.n) && start < cfg.p + cfg.n && *start == '{';
}

/* Finds the value of a top-level key; null values count as absent (Option
 * fields). Returns 1 and sets *v and *vend when present, else 0. */
static inline int pu_json_get(pu_json cfg, const char *key, const char **v, const char **vend) {
    const char *end = cfg.p + cfg.n;
    const char *p = pu_json_ws(cfg.p, end);
    if (p >= end || *p != '{') return 0;
    p = pu_json_ws(p + 1, end);
    size_t klen = strlen(key);
    while (p < end && *p == '"') {
        const char *kend = pu_json_skip_string(p, end);
        if (!kend) return 0;
        int match = (size_t)(kend - p - 2) == klen && !memcmp(p + 1, key, klen);
        p = pu_json_ws(kend, end);
        if (p >= end || *p != ':') return 0;
        const char *vs = pu_json_ws(p + 1, end);
        const char *ve = pu_json_skip_value(vs, end, 1);
        if (!ve) return 0;
        if (match) {
            if (ve - vs == 4 && !memcmp(vs, "null", 4)) return 0;
            *v = vs;
            *vend = ve;
            return 1;
        }
        p = pu_json_ws(ve, end);
        if (p < end && *p == ',') p = pu_json_ws(p + 1, end);
    }
    return 0;
}

/* Typed getters: return 1 and set *out when the key is present and well-typed,
 * 0 when absent, -1 when present with the wrong type. */
static inline int pu_json_bool(pu_json cfg, const char *key, int *out) {
    const char *v, *ve;
    if (!pu_json_get(cfg, key, &v, &ve)) return 0;
    if (ve - v == 4 && !memcmp(v, "true", 4)) {
        *out = 1;
        return 1;
    }
    if (ve - v == 5 && !memcmp(v, "false", 5)) {
        *out = 0;
        return 1;
    }
    return -1;
}

static inline int pu_json_parse_u64(const char *v, const char *ve, uint64_t *out) {
    if (v >= ve) return -1;
    uint64_t n = 0;
    for (const char *p = v; p < ve; p++) {
        if (*p < '0' || *p > '9') return -1;
        uint64_t d = (uint64_t)(*p - '0');
        if (n > (UINT64_MAX - d) / 10) return -1;
        n = n * 10 + d;
    }
    *out = n;
    return 1;
}

static inline int pu_json_u64(pu_json cfg, const char *key, uint64_t *out) {
    const char *v, *ve;
    if (!pu_json_get(cfg, key, &v, &ve)) return 0;
    return pu_json_parse_u64(v, ve, out);
}

static inline int pu_json_i64(pu_json cfg, const char *key, int64_t *out) {
    const char *v, *ve;
    if (!pu_json_get(cfg, key, &v, &ve)) return 0;
    int neg = *v == '-';
    uint64_t n;
    if (pu_json_parse_u64(v + neg, ve, &n) != 1 || n > (uint64_t)INT64_MAX) return -1;
    *out = neg ? -(int64_t)n : (int64_t)n;
    return 1;
}

/* Copies a string value (escapes other than \" and \\ are kept verbatim). */
static inline int pu_json_string(pu_json cfg, const char *key, char *out, size_t cap) {
    const char *v, *ve;
    if (!pu_json_get(cfg, key, &v, &ve)) return 0;
    if (*v != '"' || cap == 0) return -1;
    size_t n = 0;
    for (const char *p = v + 1; p < ve - 1; p++) {
        if (*p == '\\' && p + 1 < ve - 1 && (p[1] == '"' || p[1] == '\\')) p++;
        if (n + 1 >= cap) return -1;
        out[n++] = *p;
    }
    out[n] = 0;
    return 1;
}

/* A two-element array of unsigned integers, e.g. "messages_range": [10, 50]. */
static inline int pu_json_u64_pair(pu_json cfg, const char *key, uint64_t *a, uint64_t *b) {
    const char *v, *ve;
    if (!pu_json_get(cfg, key, &v, &ve)) return 0;
    const char *p = pu_json_ws(v + 1, ve);
    if (*v != '[') return -1;
    const char *e = pu_json_skip_number(p, ve);
    if (!e || pu_json_parse_u64(p, e, a) != 1) return -1;
    p = pu_json_ws(e, ve);
    if (p >= ve || *p != ',') return -1;
    p = pu_json_ws(p + 1, ve);
    e = pu_json_skip_number(p, ve);
    if (!e || pu_json_parse_u64(p, e, b) != 1) return -1;
    p = pu_json_ws(e, ve);
    return (p < ve && *p == ']') ? 1 : -1;
}

/* ---------------------------------------------------------------- durations */

/* Parses humantime-style durations ("1s", "100ms", "1m 30s", "2h") into
 * milliseconds (sub-millisecond parts are rounded down). Returns 0 or -1. */
static inline int pu_parse_duration(const char *s, uint64_t *ms_out) {
    double total_ms = 0;
    int parts = 0;
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        if (*s < '0' || *s > '9') return -1;
        uint64_t n = 0;
        while (*s >= '0' && *s <= '9') n = n * 10 + (uint64_t)(*s++ - '0');
        const char *u = s;
        while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) s++;
        size_t ul = (size_t)(s - u);
        double unit;
#define PU_UNIT(name, val) else if (ul == strlen(name) && !memcmp(u, name, ul)) unit = (val)
        if (0) unit = 0;
        PU_UNIT("ns", 1e-6); PU_UNIT("nsec", 1e-6);
        PU_UNIT("us", 1e-3); PU_UNIT("usec", 1e-3);
        PU_UNIT("ms", 1); PU_UNIT("msec", 1); PU_UNIT("millis", 1);
        PU_UNIT("s", 1e3); PU_UNIT("sec", 1e3); PU_UNIT("secs", 1e3); PU_UNIT("second", 1e3); PU_UNIT("seconds", 1e3);
        PU_UNIT("m", 6e4); PU_UNIT("min", 6e4); PU_UNIT("mins", 6e4); PU_UNIT("minute", 6e4); PU_UNIT("minutes", 6e4);
        PU_UNIT("h", 3.6e6); PU_UNIT("hr", 3.6e6); PU_UNIT("hrs", 3.6e6); PU_UNIT("hour", 3.6e6); PU_UNIT("hours", 3.6e6);
        PU_UNIT("d", 8.64e7); PU_UNIT("day", 8.64e7); PU_UNIT("days", 8.64e7);
        else return -1;
#undef PU_UNIT
        total_ms += (double)n * unit;
        parts++;
    }
    if (parts == 0) return -1;
    *ms_out = (uint64_t)total_ms;
    return 0;
}

/* ---------------------------------------------------------------- time */

static inline uint64_t pu_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline uint64_t pu_unix_micros(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static inline void pu_sleep_ms(uint64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
    }
}

/* ---------------------------------------------------------------- logging */

/* Like upstream's tracing subscriber, the log callback is latched by the first
 * open in this library; later opens' callbacks are ignored.
 *
 * And like upstream's SDK, lines are filtered here, in the plugin, by RUST_LOG as
 * the process environment holds it at that first open (default INFO), so lines
 * below it never reach the host: directives LEVEL, TARGET=LEVEL and TARGET (every
 * level), separated by commas; the longest TARGET that starts a line's target
 * wins; levels trace, debug, info, warn, error, off or 5..0; a directive that does
 * not parse (a span filter) is ignored, as EnvFilter's lossy parse does. The Go
 * runner sets RUST_LOG before the first open (runner/loglevel.go). */
static _Atomic(iggy_log_cb) pu_log_cb;

#define PU_LOG_OFF 5 /* above IGGY_LOG_ERROR: nothing passes */
#define PU_LOG_MAX_DIRECTIVES 32

typedef struct pu_log_directive {
    char target[128];
    uint8_t min; /* the lowest level byte that passes */
} pu_log_directive;

static pu_log_directive pu_log_dirs[PU_LOG_MAX_DIRECTIVES]; /* longest target first */
static int pu_log_ndirs;
static uint8_t pu_log_default = IGGY_LOG_INFO;
static pthread_once_t pu_log_once = PTHREAD_ONCE_INIT;

/* The level byte a level word enables from, or -1. */
static inline int pu_log_level_word(const char *w) {
    static const struct { const char *name; int min; } words[] = {
        {"trace", IGGY_LOG_TRACE}, {"debug", IGGY_LOG_DEBUG}, {"info", IGGY_LOG_INFO},
        {"warn", IGGY_LOG_WARN},   {"error", IGGY_LOG_ERROR}, {"off", PU_LOG_OFF},
        {"5", IGGY_LOG_TRACE},     {"4", IGGY_LOG_DEBUG},     {"3", IGGY_LOG_INFO},
        {"2", IGGY_LOG_WARN},      {"1", IGGY_LOG_ERROR},     {"0", PU_LOG_OFF},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(w, words[i].name) == 0) return words[i].min;
    return -1;
}

static inline char *pu_trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
    return s;
}

static inline void pu_log_add_directive(const char *target, int min) {
    for (int i = 0; i < pu_log_ndirs; i++)
        if (strcmp(pu_log_dirs[i].target, target) == 0) { /* a later one wins */
            pu_log_dirs[i].min = (uint8_t)min;
            return;
        }
    if (pu_log_ndirs == PU_LOG_MAX_DIRECTIVES || strlen(target) >= sizeof pu_log_dirs[0].target) return;
    int at = pu_log_ndirs++;
    while (at > 0 && strlen(pu_log_dirs[at - 1].target) < strlen(target)) {
        pu_log_dirs[at] = pu_log_dirs[at - 1];
        at--;
    }
    strcpy(pu_log_dirs[at].target, target);
    pu_log_dirs[at].min = (uint8_t)min;
}

static inline void pu_log_read_filter(void) {
    const char *env = getenv("RUST_LOG");
    if (!env || !*env) return;
    char *copy = strdup(env);
    if (!copy) return;
    char *save = NULL;
    for (char *d = strtok_r(copy, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
        d = pu_trim(d);
        if (!*d || strpbrk(d, "[]{}")) continue;
        char *eq = strchr(d, '=');
        if (!eq) {
            int min = pu_log_level_word(d);
            if (min >= 0)
                pu_log_default = (uint8_t)min;
            else
                pu_log_add_directive(d, IGGY_LOG_TRACE);
            continue;
        }
        *eq = 0;
        char *target = pu_trim(d);
        int min = pu_log_level_word(pu_trim(eq + 1));
        if (*target && min >= 0) pu_log_add_directive(target, min);
    }
    free(copy);
}

/* Whether a line of level on target passes the filter read at the first open. */
static inline int pu_log_enabled(uint8_t level, const char *target) {
    for (int i = 0; i < pu_log_ndirs; i++)
        if (strncmp(target, pu_log_dirs[i].target, strlen(pu_log_dirs[i].target)) == 0)
            return level >= pu_log_dirs[i].min;
    return level >= pu_log_default;
}

static inline void pu_log_init(iggy_log_cb cb) {
    pthread_once(&pu_log_once, pu_log_read_filter);
    iggy_log_cb expected = NULL;
    if (cb) atomic_compare_exchange_strong(&pu_log_cb, &expected, cb);
}

__attribute__((format(printf, 3, 4))) static inline void pu_log(uint8_t level, const char *target,
                                                                const char *fmt, ...) {
    iggy_log_cb cb = atomic_load(&pu_log_cb);
    if (!cb || !pu_log_enabled(level > IGGY_LOG_ERROR ? IGGY_LOG_ERROR : level, target)) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof msg) n = sizeof msg - 1;
    cb(level, (const uint8_t *)target, strlen(target), (const uint8_t *)msg, (size_t)n);
}

/* ---------------------------------------------------------------- instances */

typedef struct pu_entry {
    uint32_t id;
    void *inst;
    int refs;     /* calls currently using inst */
    int removing; /* close in progress: no new users */
} pu_entry;

typedef struct pu_table {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pu_entry *e;
    size_t n, cap;
} pu_table;

#define PU_TABLE_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0}

static inline pu_entry *pu_table_find_locked(pu_table *t, uint32_t id) {
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].id == id) return &t->e[i];
    return NULL;
}

/* Registers inst under id; -1 if the id is already taken. */
static inline int pu_table_add(pu_table *t, uint32_t id, void *inst) {
    pthread_mutex_lock(&t->mu);
    if (pu_table_find_locked(t, id)) {
        pthread_mutex_unlock(&t->mu);
        return -1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        pu_entry *e = realloc(t->e, cap * sizeof *e);
        if (!e) abort();
        t->e = e;
        t->cap = cap;
    }
    pu_entry entry = {id, inst, 0, 0};
    t->e[t->n++] = entry;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

static inline int pu_table_contains(pu_table *t, uint32_t id) {
    pthread_mutex_lock(&t->mu);
    int found = pu_table_find_locked(t, id) != NULL;
    pthread_mutex_unlock(&t->mu);
    return found;
}

/* Returns the instance for id with a reference held (release it with
 * pu_table_release), or NULL when unknown or being closed. */
static inline void *pu_table_acquire(pu_table *t, uint32_t id) {
    pthread_mutex_lock(&t->mu);
    pu_entry *e = pu_table_find_locked(t, id);
    void *inst = NULL;
    if (e && !e->removing) {
        e->refs++;
        inst = e->inst;
    }
    pthread_mutex_unlock(&t->mu);
    return inst;
}

static inline void pu_table_release(pu_table *t, uint32_t id) {
    pthread_mutex_lock(&t->mu);
    pu_entry *e = pu_table_find_locked(t, id);
    if (e && --e->refs == 0) pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

/* Removes id once no call uses it any more (so close waits for an in-flight
 * consume, like upstream) and returns its instance, or NULL when unknown. */
static inline void *pu_table_remove(pu_table *t, uint32_t id) {
    pthread_mutex_lock(&t->mu);
    pu_entry *e = pu_table_find_locked(t, id);
    if (!e || e->removing) {
        pthread_mutex_unlock(&t->mu);
        return NULL;
    }
    e->removing = 1;
    while ((e = pu_table_find_locked(t, id))->refs > 0) pthread_cond_wait(&t->cv, &t->mu);
    void *inst = e->inst;
    *e = t->e[--t->n];
    pthread_mutex_unlock(&t->mu);
    return inst;
}

/* ---------------------------------------------------------------- random */

typedef struct pu_rng {
    uint64_t s;
} pu_rng;

static inline void pu_rng_seed(pu_rng *r, uint64_t salt) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->s = ((uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)ts.tv_sec << 20) ^
           (salt * 0xBF58476D1CE4E5B9ULL) ^ (uint64_t)getpid();
    if (r->s == 0) r->s = 0x2545F4914F6CDD1DULL;
}

static inline uint64_t pu_rng_next(pu_rng *r) {
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [lo, hi); lo when the range is empty. */
static inline uint64_t pu_rng_range(pu_rng *r, uint64_t lo, uint64_t hi) {
    if (hi <= lo) return lo;
    return lo + pu_rng_next(r) % (hi - lo);
}

/* ---------------------------------------------------------------- source loop */

struct pu_loop;

/* What a source implements for pu_loop. */
typedef struct pu_source_ops {
    /* Produces one batch: appends an encoded ProducedMessages to out and returns
     * 0, or returns non-zero with a reason in *why (logged; polled again). It
     * should pace itself with pu_loop_sleep so close can interrupt it. */
    int (*poll)(void *ctx, struct pu_loop *loop, pu_buf *out, const char **why);
    /* Applies an ACK (0) or NACK (1); non-zero stops the loop for good. May be
     * NULL. Runs on the host's thread for host answers. */
    int (*on_result)(void *ctx, uint8_t result);
} pu_source_ops;

enum { PU_APPLIED_ACK, PU_APPLIED_NACK, PU_STOP };

typedef struct pu_loop {
    uint32_t id;
    const char *target; /* log target of the SDK-level messages */
    void *ctx;
    const pu_source_ops *ops;
    iggy_send_cb send;
    iggy_legacy_send_cb legacy_send;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int started;
    int shutdown;
    int finished;
    int pending;          /* a batch awaits the host's answer */
    uint64_t pending_id;
    int completed;        /* the host answered the pending batch */
    int completion;       /* PU_APPLIED_ACK / PU_APPLIED_NACK / PU_STOP */
    uint32_t consecutive_nacks;
} pu_loop;

static inline void pu_loop_init(pu_loop *l, uint32_t id, const char *target, void *ctx,
                                const pu_source_ops *ops) {
    memset(l, 0, sizeof *l);
    l->id = id;
    l->target = target;
    l->ctx = ctx;
    l->ops = ops;
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &attr);
    pthread_condattr_destroy(&attr);
}

static inline void pu_deadline(struct timespec *ts, uint64_t ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static inline int pu_loop_stopping(pu_loop *l) {
    pthread_mutex_lock(&l->mu);
    int stop = l->shutdown;
    pthread_mutex_unlock(&l->mu);
    return stop;
}

/* Sleeps up to ms; returns 1 as soon as shutdown is requested, else 0.
 * A zero interval does not wait at all: a timed wait on a deadline already
 * past still costs the timer slack, about 100 us per call on the 2-core VM,
 * which benchmarks would count against the runner. */
static inline int pu_loop_sleep(pu_loop *l, uint64_t ms) {
    if (ms == 0) return pu_loop_stopping(l);
    struct timespec ts;
    pu_deadline(&ts, ms);
    pthread_mutex_lock(&l->mu);
    while (!l->shutdown)
        if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) == ETIMEDOUT) break;
    int stop = l->shutdown;
    pthread_mutex_unlock(&l->mu);
    return stop;
}

/* Runs the hook and the NACK counter; returns PU_APPLIED_* or PU_STOP. */
static inline int pu_loop_apply(pu_loop *l, uint8_t result) {
    if (l->ops->on_result && l->ops->on_result(l->ctx, result) != 0) {
        pu_log(IGGY_LOG_ERROR, l->target,
               "Failed to process %s for source connector with ID: %u. on_batch_result failed",
               result == IGGY_BATCH_ACK ? "Ack" : "Nack", l->id);
        return PU_STOP;
    }
    pthread_mutex_lock(&l->mu);
    uint32_t nacks = result == IGGY_BATCH_ACK ? (l->consecutive_nacks = 0)
                                               : ++l->consecutive_nacks;
    pthread_mutex_unlock(&l->mu);
    if (nacks >= IGGY_MAX_CONSECUTIVE_NACKS) {
        pu_log(IGGY_LOG_ERROR, l->target,
               "Stopping source connector with ID: %u after %u consecutive NACKs", l->id, nacks);
        return PU_STOP;
    }
    return result == IGGY_BATCH_ACK ? PU_APPLIED_ACK : PU_APPLIED_NACK;
}

/* Waits min(100 ms * 2^(n-1), 5 s) after the n-th consecutive NACK. */
static inline int pu_loop_backoff(pu_loop *l) {
    pthread_mutex_lock(&l->mu);
    uint32_t n = l->consecutive_nacks;
    pthread_mutex_unlock(&l->mu);
    uint64_t delay = IGGY_NACK_RETRY_DELAY_MS;
    for (uint32_t i = 1; i < n && delay < IGGY_MAX_NACK_RETRY_DELAY_MS; i++) delay *= 2;
    if (delay > IGGY_MAX_NACK_RETRY_DELAY_MS) delay = IGGY_MAX_NACK_RETRY_DELAY_MS;
    return pu_loop_sleep(l, delay);
}

/* Takes the pending batch back from the host if it is still batch_id; 0 when
 * the host took it first (its answer is on the way). */
static inline int pu_loop_reclaim_locked(pu_loop *l, uint64_t batch_id) {
    if (l->pending && l->pending_id == batch_id) {
        l->pending = 0;
        return 1;
    }
    return 0;
}

static inline void *pu_loop_main(void *arg) {
    pu_loop *l = arg;
    pu_buf buf = {0};
    uint64_t batch_id = 1;
    while (!pu_loop_stopping(l)) {
        buf.len = 0;
        const char *why = "unknown error";
        int rc = l->ops->poll(l->ctx, l, &buf, &why);
        if (pu_loop_stopping(l)) break;
        if (rc != 0) {
            pu_log(IGGY_LOG_ERROR, l->target,
                   "Failed to poll messages for source connector with ID: %u. %s", l->id, why);
            continue;
        }
        if (l->legacy_send) {
            /* The legacy ABI has no answer: a sent batch counts as delivered. */
            l->legacy_send(l->id, buf.data, buf.len);
            if (l->ops->on_result) l->ops->on_result(l->ctx, IGGY_BATCH_ACK);
            continue;
        }

        pthread_mutex_lock(&l->mu);
        l->pending = 1;
        l->pending_id = batch_id;
        l->completed = 0;
        pthread_mutex_unlock(&l->mu);

        int32_t accepted = l->send(l->id, batch_id, buf.data, buf.len);
        int completion;
        int shutting_down = 0;
        if (accepted != 0) {
            pthread_mutex_lock(&l->mu);
            int ours = pu_loop_reclaim_locked(l, batch_id);
            pthread_mutex_unlock(&l->mu);
            if (!ours) break; /* answered although rejected: protocol violation */
            completion = pu_loop_apply(l, IGGY_BATCH_NACK);
        } else {
            struct timespec deadline;
            pu_deadline(&deadline, IGGY_BATCH_RESULT_TIMEOUT_MS);
            int timed_out = 0;
            pthread_mutex_lock(&l->mu);
            while (!l->completed && !l->shutdown && !timed_out)
                timed_out = pthread_cond_timedwait(&l->cv, &l->mu, &deadline) == ETIMEDOUT;
            if (l->completed) {
                completion = l->completion;
                shutting_down = l->shutdown;
                pthread_mutex_unlock(&l->mu);
            } else {
                shutting_down = l->shutdown;
                if (!shutting_down)
                    pu_log(IGGY_LOG_WARN, l->target,
                           "Timed out waiting for batch result for source connector with ID: %u, "
                           "batch ID: %llu",
                           l->id, (unsigned long long)batch_id);
                int ours = pu_loop_reclaim_locked(l, batch_id);
                if (!ours) {
                    /* The host is applying its answer right now: wait for it. */
                    while (!l->completed) pthread_cond_wait(&l->cv, &l->mu);
                    completion = l->completion;
                    pthread_mutex_unlock(&l->mu);
                } else {
                    pthread_mutex_unlock(&l->mu);
                    completion = pu_loop_apply(l, IGGY_BATCH_NACK);
                }
            }
        }
        if (completion == PU_STOP || shutting_down) break;
        if (completion == PU_APPLIED_NACK && pu_loop_backoff(l)) break;
        batch_id++;
    }
    pu_buf_free(&buf);
    pthread_mutex_lock(&l->mu);
    l->finished = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* Starts the poll loop thread (v2 when send is set, legacy when legacy_send is). */
static inline int pu_loop_start(pu_loop *l, iggy_send_cb send, iggy_legacy_send_cb legacy_send) {
    pthread_mutex_lock(&l->mu);
    if (l->started) {
        pthread_mutex_unlock(&l->mu);
        return -1;
    }
    l->send = send;
    l->legacy_send = legacy_send;
    l->started = 1;
    pthread_mutex_unlock(&l->mu);
    if (pthread_create(&l->thread, NULL, pu_loop_main, l) != 0) {
        pthread_mutex_lock(&l->mu);
        l->started = 0;
        pthread_mutex_unlock(&l->mu);
        return -1;
    }
    return 0;
}

/* The host's answer for batch_id (iggy_source_batch_result). */
static inline int32_t pu_loop_batch_result(pu_loop *l, uint64_t batch_id, uint8_t code) {
    int invalid = code != IGGY_BATCH_ACK && code != IGGY_BATCH_NACK;
    pthread_mutex_lock(&l->mu);
    if (!l->pending) {
        pthread_mutex_unlock(&l->mu);
        pu_log(IGGY_LOG_ERROR, l->target,
               "No batch is awaiting a result for source connector with ID: %u", l->id);
        return -1;
    }
    if (l->pending_id != batch_id) {
        uint64_t expected = l->pending_id;
        pthread_mutex_unlock(&l->mu);
        pu_log(IGGY_LOG_ERROR, l->target,
               "Batch result ID mismatch for source connector with ID: %u. Expected: %llu, "
               "received: %llu",
               l->id, (unsigned long long)expected, (unsigned long long)batch_id);
        return -1;
    }
    l->pending = 0;
    pthread_mutex_unlock(&l->mu);
    if (invalid)
        pu_log(IGGY_LOG_ERROR, l->target,
               "Invalid batch result: %u for source connector with ID: %u; treating it as Nack",
               code, l->id);
    int completion = pu_loop_apply(l, invalid ? IGGY_BATCH_NACK : code);
    pthread_mutex_lock(&l->mu);
    l->completed = 1;
    l->completion = completion;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return (invalid || completion == PU_STOP) ? -1 : 0;
}

/* Signals shutdown and waits for the loop thread (close). */
static inline void pu_loop_stop(pu_loop *l) {
    pthread_mutex_lock(&l->mu);
    l->shutdown = 1;
    pthread_cond_broadcast(&l->cv);
    int started = l->started;
    pthread_mutex_unlock(&l->mu);
    if (started) pthread_join(l->thread, NULL);
}

static inline void pu_loop_destroy(pu_loop *l) {
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
}

/* ---------------------------------------------------------------- sink input */

/* The decoded fixed part of one consume call. */
typedef struct pu_consume {
    const uint8_t *stream, *topic;
    size_t stream_len, topic_len;
    uint32_t partition_id;
    uint64_t current_offset;
    uint32_t schema;
    uint64_t count; /* messages in the RawMessages buffer */
    pu_reader msgs; /* positioned at the first RawMessage */
} pu_consume;

typedef struct pu_raw_message {
    uint64_t id_hi, id_lo, offset, checksum, timestamp, origin_timestamp;
    const uint8_t *headers, *payload;
    size_t headers_len, payload_len;
} pu_raw_message;

/* The schema as upstream's SDK displays it in log lines (strum names: note
 * "flatbuffer", while configs spell it "flat_buffer"). */
static inline const char *pu_schema_name(uint32_t schema) {
    static const char *names[] = {"json", "raw", "text", "proto", "flatbuffer", "avro"};
    return schema < 6 ? names[schema] : "unknown";
}

/* Decodes the three consume buffers' headers; returns 0, or -1 after logging the
 * upstream-style error naming the failing buffer. */
static inline int pu_consume_begin(pu_consume *c, uint32_t id, const char *target,
                                   const uint8_t *topic_meta, size_t topic_meta_len,
                                   const uint8_t *msgs_meta, size_t msgs_meta_len,
                                   const uint8_t *msgs, size_t msgs_len) {
    memset(c, 0, sizeof *c);
    pu_reader r = pu_reader_new(topic_meta, topic_meta_len);
    c->stream = pu_get_str(&r, &c->stream_len);
    c->topic = pu_get_str(&r, &c->topic_len);
    if (r.err) {
        pu_log(IGGY_LOG_ERROR, target,
               "Failed to decode topic metadata by sink connector with ID: %u. %s", id, r.err);
        return -1;
    }
    r = pu_reader_new(msgs_meta, msgs_meta_len);
    c->partition_id = pu_get_u32(&r);
    c->current_offset = pu_get_u64(&r);
    c->schema = pu_get_u32(&r);
    if (!r.err && c->schema > 5) pu_fail(&r, "unknown schema");
    if (r.err) {
        pu_log(IGGY_LOG_ERROR, target,
               "Failed to decode messages metadata by sink connector with ID: %u from stream: "
               "%.*s, topic: %.*s. %s",
               id, (int)c->stream_len, c->stream, (int)c->topic_len, c->topic, r.err);
        return -1;
    }
    r = pu_reader_new(msgs, msgs_len);
    uint32_t raw_schema = pu_get_u32(&r);
    if (!r.err && raw_schema > 5) pu_fail(&r, "unknown schema");
    c->count = pu_get_u64(&r);
    /* Validate every message before any is delivered, as upstream decodes the
     * whole buffer first. */
    pu_reader probe = r;
    for (uint64_t i = 0; i < c->count && !probe.err; i++) {
        uint64_t hi, lo;
        size_t n;
        pu_get_u128(&probe, &hi, &lo);
        for (int k = 0; k < 4; k++) pu_get_u64(&probe);
        pu_get_bytes(&probe, &n);
        pu_get_bytes(&probe, &n);
    }
    if (!r.err && probe.err) r.err = probe.err;
    if (r.err) {
        pu_log(IGGY_LOG_ERROR, target,
               "Failed to decode raw messages by sink connector with ID: %u from stream: %.*s, "
               "topic: %.*s. %s",
               id, (int)c->stream_len, c->stream, (int)c->topic_len, c->topic, r.err);
        return -1;
    }
    c->msgs = r;
    return 0;
}

/* The SDK's log target for batch decoding errors, as upstream's sink macro logs them. */
#define PU_SINK_SDK_TARGET "iggy_connector_sdk::sink"

/* The start of every iggy_sink_consume: takes a reference to sink instance id in
 * table and decodes the batch into c. Returns the instance, to be released with
 * pu_table_release when the batch is done; or NULL after logging why (an unknown
 * id under the plugin's target, a bad batch under PU_SINK_SDK_TARGET), with
 * nothing left to release: the caller then returns -1. */
static inline void *pu_sink_consume_begin(pu_table *table, uint32_t id, const char *target,
                                          pu_consume *c, const uint8_t *topic_meta,
                                          size_t topic_meta_len, const uint8_t *msgs_meta,
                                          size_t msgs_meta_len, const uint8_t *msgs,
                                          size_t msgs_len) {
    void *inst = pu_table_acquire(table, id);
    if (!inst) {
        pu_log(IGGY_LOG_ERROR, target,
               "Sink connector with ID: %u was not found and consume messages cannot be invoked.",
               id);
        return NULL;
    }
    if (pu_consume_begin(c, id, PU_SINK_SDK_TARGET, topic_meta, topic_meta_len, msgs_meta,
                         msgs_meta_len, msgs, msgs_len) != 0) {
        pu_table_release(table, id);
        return NULL;
    }
    return inst;
}

/* The start of every iggy_sink_close: removes sink instance id from table (waiting
 * for an in-flight consume) and returns it for the caller to free, or NULL after
 * logging, under the plugin's target, that there is no such sink. */
static inline void *pu_sink_close_begin(pu_table *table, uint32_t id, const char *target) {
    void *inst = pu_table_remove(table, id);
    if (!inst)
        pu_log(IGGY_LOG_ERROR, target, "Sink connector with ID: %u was not found and cannot be closed.",
               id);
    return inst;
}

/* Reads the next RawMessage (already validated by pu_consume_begin). */
static inline void pu_consume_next(pu_consume *c, pu_raw_message *m) {
    pu_get_u128(&c->msgs, &m->id_hi, &m->id_lo);
    m->offset = pu_get_u64(&c->msgs);
    m->checksum = pu_get_u64(&c->msgs);
    m->timestamp = pu_get_u64(&c->msgs);
    m->origin_timestamp = pu_get_u64(&c->msgs);
    m->headers = pu_get_bytes(&c->msgs, &m->headers_len);
    m->payload = pu_get_bytes(&c->msgs, &m->payload_len);
}

/* Per-message checks upstream applies before the connector sees a message:
 * headers must decode, a json payload must parse, a text payload must be UTF-8.
 * Returns NULL when the message is fine, else the reason (*part names the
 * failing part: "headers" or "payload"). */
static inline const char *pu_message_problem(uint32_t schema, const pu_raw_message *m,
                                             const char **part) {
    *part = "payload";
    if (m->headers_len > 0) {
        pu_reader hr = pu_reader_new(m->headers, m->headers_len);
        if (pu_check_header_map(&hr) < 0) {
            *part = "headers";
            return hr.err;
        }
    }
    if (schema == IGGY_SCHEMA_JSON && !pu_json_valid((const char *)m->payload, m->payload_len))
        return "invalid JSON payload";
    if (schema == IGGY_SCHEMA_TEXT && !pu_utf8_valid(m->payload, m->payload_len))
        return "invalid UTF-8 text payload";
    return NULL;
}

#endif /* IGGY_PLUGIN_UTIL_H */
