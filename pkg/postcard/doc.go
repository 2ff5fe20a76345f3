// Package postcard encodes and decodes the postcard 1.x byte layouts that cross the connector plugin C ABI (topic and message metadata, raw and produced messages, header maps, connector state).
package postcard
