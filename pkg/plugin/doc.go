// Package plugin loads upstream-compatible connector plugins (shared libraries with the iggy_connector_sdk C ABI) with purego and drives them through typed sink and source handles.
package plugin
