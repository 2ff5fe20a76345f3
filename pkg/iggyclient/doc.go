// Package iggyclient is the one small interface the pumps use to talk to an Iggy server, with its implementation over the official Go SDK v0.8.0 (reconnect, login, poll, store offset, send).
package iggyclient
