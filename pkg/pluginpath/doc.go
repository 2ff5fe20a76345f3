// Package pluginpath finds a connector's plugin file and decides whether it may be loaded, without
// loading anything: the supervisor checks plugins with it and so does not link the dynamic loader
// (purego) that pkg/plugin needs; the runner uses both.
//
//   - resolve.go: ResolvePath turns a configured plugin path into the file to load, the way upstream
//     does (library extension, executable and working directories, system library directories).
//   - allow.go: an AllowList decides which resolved plugin files may be loaded at all: only from
//     allowed directories, once ".." and symlinks are resolved, and never a file that others than
//     root or the running user could have written.
//   - owner_unix.go, owner_other.go: the file owner's uid, where the OS has one.
package pluginpath
