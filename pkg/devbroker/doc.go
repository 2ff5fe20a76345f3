// Package devbroker is an in-memory server speaking the Iggy 0.8 TCP binary protocol, for tests and the local demo only: it keeps everything in memory.
package devbroker
