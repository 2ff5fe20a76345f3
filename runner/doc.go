// Package runner runs exactly one connector (sink or source) end to end in this process: plugin, Iggy pump, state, and a small HTTP endpoint.
package runner
