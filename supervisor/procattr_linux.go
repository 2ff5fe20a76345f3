package supervisor

import "syscall"

// runnerProcAttr puts a runner in its own process group and has the kernel SIGKILL it when the
// supervisor (precisely: the forking thread, see startOnSpawnThread) dies.
func runnerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
