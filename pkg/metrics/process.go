package metrics

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/unix"
)

// ProcessStats are one process's figures as /stats needs them.
type ProcessStats struct {
	PID        int32
	RSS        uint64  // resident set size, bytes
	VMS        uint64  // virtual memory size, bytes
	CPUSeconds float64 // user + system CPU time consumed so far
	// CPUUsage is a percentage where 100 is one full core. From a Sampler:
	// the share since the previous read of the same pid (0 on the first).
	// From ReadProcess: the average over the process's life.
	CPUUsage   float64
	Threads    int32
	CreateTime int64 // ms since epoch
}

// ReadProcess reads the current figures of process pid.
func ReadProcess(pid int32) (ProcessStats, error) {
	p, err := process.NewProcess(pid)
	if err != nil {
		return ProcessStats{}, fmt.Errorf("read process %d: %w", pid, err)
	}
	s, err := readProcess(p, true)
	if err != nil {
		return ProcessStats{}, err
	}
	if lifetime, err := p.CPUPercent(); err == nil {
		s.CPUUsage = lifetime
	}
	return s, nil
}

// readProcess reads memory and CPU time; full adds the thread count and
// creation time, which Sampler reads leave out to stay cheap.
func readProcess(p *process.Process, full bool) (ProcessStats, error) {
	s := ProcessStats{PID: p.Pid}
	m, err := p.MemoryInfo()
	if err != nil {
		return s, fmt.Errorf("read memory of process %d: %w", p.Pid, err)
	}
	s.RSS, s.VMS = m.RSS, m.VMS
	t, err := p.Times()
	if err != nil {
		return s, fmt.Errorf("read CPU times of process %d: %w", p.Pid, err)
	}
	s.CPUSeconds = t.User + t.System
	if !full {
		return s, nil
	}
	if n, err := p.NumThreads(); err == nil {
		s.Threads = n
	}
	if ct, err := p.CreateTime(); err == nil {
		s.CreateTime = ct
	}
	return s, nil
}

// HostStats are the host-wide figures of /stats.
type HostStats struct {
	// TotalCPUUsage is the busy share of all cores (0-100) since the
	// previous Host call; the first call measures since boot.
	TotalCPUUsage   float64
	TotalMemory     uint64 // host RAM, or the cgroup limit when lower
	AvailableMemory uint64 // MemAvailable, or what a capping cgroup leaves
	NumCPU          int    // logical CPUs of the host
}

// Sampler keeps the previous CPU sample of each process and of the host, so
// CPU figures are deltas between consecutive reads, as upstream's
// process-wide sampler gives them. Safe for concurrent use.
type Sampler struct {
	hostCPUs int          // logical CPUs of the host
	affinity map[int]bool // the cores this process may run on, when a strict subset; nil otherwise

	mu       sync.Mutex
	procs    map[int32]cpuSample
	hostPrev hostCPU
}

type cpuSample struct {
	handle         *process.Process // kept: opening one costs several /proc reads
	processSeconds float64          // the process's user+system
	hostSeconds    float64          // the host's total CPU time at that moment
}

type hostCPU struct{ total, busy float64 }

// NewSampler returns a sampler with no previous samples. Like upstream it
// takes the process's CPU affinity once: when it is a strict subset of the
// host's cores, the host CPU share is averaged over those cores only.
func NewSampler() *Sampler {
	s := &Sampler{procs: map[int32]cpuSample{}, hostCPUs: runtime.NumCPU()}
	if n, err := cpu.Counts(true); err == nil && n > 0 {
		s.hostCPUs = n
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil && set.Count() > 0 && set.Count() < s.hostCPUs {
		s.affinity = map[int]bool{}
		for i := range s.hostCPUs {
			if set.IsSet(i) {
				s.affinity[i] = true
			}
		}
	}
	return s
}

// Process reads the memory and CPU figures of process pid (Threads and
// CreateTime are left zero); CPUUsage is Δ(process CPU) ÷ (Δ host CPU ÷
// cores) × 100 since the previous read of pid, capped at cores × 100.
func (s *Sampler) Process(pid int32) (ProcessStats, error) {
	host, err := readHostCPU(nil)
	if err != nil {
		return ProcessStats{}, err
	}
	return s.sample(pid, host)
}

// sample reads pid's figures against the host CPU time host and keeps them as pid's baseline.
func (s *Sampler) sample(pid int32, host hostCPU) (ProcessStats, error) {
	s.mu.Lock()
	prev, seen := s.procs[pid]
	s.mu.Unlock()
	p := prev.handle
	if !seen {
		var err error
		if p, err = process.NewProcess(pid); err != nil {
			return ProcessStats{}, fmt.Errorf("read process %d: %w", pid, err)
		}
	}
	st, err := readProcess(p, false)
	if err != nil {
		return ProcessStats{}, err
	}
	s.mu.Lock()
	s.procs[pid] = cpuSample{handle: p, processSeconds: st.CPUSeconds, hostSeconds: host.total}
	s.mu.Unlock()
	if seen {
		st.CPUUsage = cpuShare(st.CPUSeconds-prev.processSeconds, host.total-prev.hostSeconds, float64(s.hostCPUs))
	}
	return st, nil
}

// Processes reads the memory and CPU figures of every pid in one pass, the host's CPU time read
// once for all; each CPUUsage is the share since the previous read of that pid, as Process gives
// it. A pid that cannot be read (it exited) is left out.
func (s *Sampler) Processes(pids []int32) map[int32]ProcessStats {
	out := make(map[int32]ProcessStats, len(pids))
	host, err := readHostCPU(nil)
	if err != nil {
		return out
	}
	for _, pid := range pids {
		if st, err := s.sample(pid, host); err == nil {
			out[pid] = st
		}
	}
	return out
}

// cpuShare converts used process seconds over a host-CPU-time window into
// a percentage of one core.
func cpuShare(processDelta, hostDelta, cores float64) float64 {
	if hostDelta <= 0 || processDelta <= 0 {
		return 0
	}
	pct := processDelta / (hostDelta / cores) * 100
	return math.Min(pct, cores*100)
}

// Forget drops the previous sample of pid (a runner that exited), so a
// later process reusing the pid starts from a fresh baseline.
func (s *Sampler) Forget(pid int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.procs, pid)
}

// Host reads the host-wide CPU and memory figures.
func (s *Sampler) Host() (HostStats, error) {
	h := HostStats{NumCPU: s.hostCPUs}
	cur, err := readHostCPU(s.affinity)
	if err != nil {
		return h, err
	}
	s.mu.Lock()
	prev := s.hostPrev
	s.hostPrev = cur
	s.mu.Unlock()
	if d := cur.total - prev.total; d > 0 {
		h.TotalCPUUsage = math.Max(0, math.Min(100, (cur.busy-prev.busy)/d*100))
	}
	vm, err := mem.VirtualMemory()
	if err != nil {
		return h, fmt.Errorf("read host memory: %w", err)
	}
	h.TotalMemory, h.AvailableMemory = vm.Total, vm.Available
	if limit, available, ok := cgroupMemory(); ok && limit < h.TotalMemory {
		h.TotalMemory = limit
		h.AvailableMemory = available
	}
	return h, nil
}

// readHostCPU sums the host's CPU times, over the cores in only when only
// is not nil.
func readHostCPU(only map[int]bool) (hostCPU, error) {
	times, err := cpu.Times(only != nil)
	if err != nil || len(times) == 0 {
		return hostCPU{}, fmt.Errorf("read host CPU times: %w", err)
	}
	var sum hostCPU
	for _, t := range times {
		if only != nil {
			core, err := strconv.Atoi(strings.TrimPrefix(t.CPU, "cpu"))
			if err != nil || !only[core] {
				continue
			}
		}
		// Guest time is already part of user time on Linux, so it is left out.
		total := t.User + t.Nice + t.System + t.Idle + t.Iowait + t.Irq + t.Softirq + t.Steal
		sum.total += total
		sum.busy += total - t.Idle - t.Iowait
	}
	return sum, nil
}

// cgroupRoot is where the cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupMemory returns the lowest memory limit among this process's cgroup
// and its ancestors, and the minimum over those capped groups of
// limit − (usage − inactive_file − active_file), clamped to [0, limit].
// ok is false when no group caps memory.
func cgroupMemory() (limit, available uint64, ok bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, 0, false
	}
	v2Path, v1Path, hasV1 := parseProcCgroup(data)
	// Hybrid hosts list both; the v1 memory controller is the one in force then.
	g := cgroupFiles{limit: "memory.max", usage: "memory.current", inactive: "inactive_file", active: "active_file"}
	top, path := cgroupRoot, v2Path
	if hasV1 {
		g = cgroupFiles{limit: "memory.limit_in_bytes", usage: "memory.usage_in_bytes", inactive: "total_inactive_file", active: "total_active_file"}
		top, path = filepath.Join(cgroupRoot, "memory"), v1Path
	}
	leaf := mountedDir(top, path)
	for dir := leaf; ; dir = filepath.Dir(dir) {
		if l, a, capped := g.read(dir); capped {
			if !ok || l < limit {
				limit = l
			}
			if !ok || a < available {
				available = a
			}
			ok = true
		}
		if dir == top || len(dir) <= len(top) {
			break
		}
	}
	return limit, available, ok
}

// parseProcCgroup extracts the v2 path ("0::/x") and the v1 memory
// controller path ("N:...memory...:/x") from /proc/self/cgroup.
func parseProcCgroup(data []byte) (v2Path, v1Path string, hasV1 bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), ":", 3)
		if len(fields) != 3 {
			continue
		}
		if fields[0] == "0" && fields[1] == "" {
			v2Path = fields[2]
			continue
		}
		for _, c := range strings.Split(fields[1], ",") {
			if c == "memory" {
				v1Path, hasV1 = fields[2], true
			}
		}
	}
	return v2Path, v1Path, hasV1
}

// mountedDir maps a cgroup path to its directory; inside a container the
// path of /proc/self/cgroup may not exist under the mount, which then is
// the group itself.
func mountedDir(mount, path string) string {
	dir := filepath.Join(mount, filepath.Clean("/"+path))
	if _, err := os.Stat(dir); err != nil {
		return mount
	}
	return dir
}

type cgroupFiles struct{ limit, usage, inactive, active string }

func (g cgroupFiles) read(dir string) (limit, available uint64, capped bool) {
	limit, err := readUintFile(filepath.Join(dir, g.limit))
	if err != nil || limit == 0 || limit >= math.MaxInt64/2 { // "max" or v1's huge "no limit"
		return 0, 0, false
	}
	usage, err := readUintFile(filepath.Join(dir, g.usage))
	if err != nil {
		return 0, 0, false
	}
	stat, _ := os.ReadFile(filepath.Join(dir, "memory.stat"))
	reclaimable := statValue(stat, g.inactive) + statValue(stat, g.active)
	used := usage - min(usage, reclaimable)
	if used >= limit {
		return limit, 0, true
	}
	return limit, limit - used, true
}

func readUintFile(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

func statValue(stat []byte, key string) uint64 {
	for _, line := range strings.Split(string(stat), "\n") {
		name, value, found := strings.Cut(line, " ")
		if found && name == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
			return n
		}
	}
	return 0
}
