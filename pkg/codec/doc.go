// Package codec decodes Iggy message payloads into the connector payload model and encodes them back, per stream schema (json, raw, text, ...).
package codec
