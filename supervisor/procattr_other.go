//go:build !linux

package supervisor

import "syscall"

// runnerProcAttr puts a runner in its own process group. Outside Linux there is no parent-death
// signal: runners of a supervisor killed with SIGKILL keep running until stopped (development
// only; production targets Linux).
func runnerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
