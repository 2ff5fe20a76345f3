package metrics_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/metrics"
)

func TestReadProcessOfARealChild(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pid := int32(child.Process.Pid)
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	p, err := metrics.ReadProcess(pid)
	if err != nil {
		t.Fatalf("ReadProcess(%d): %v", pid, err)
	}
	if p.PID != pid || p.RSS == 0 || p.Threads < 1 || p.CreateTime == 0 {
		t.Fatalf("ReadProcess(%d) = %+v, want its pid, RSS, threads and create time", pid, p)
	}

	_ = child.Process.Kill()
	_ = child.Wait()
	if _, err := metrics.ReadProcess(pid); err == nil || !strings.Contains(err.Error(), fmt.Sprint(pid)) {
		t.Fatalf("ReadProcess of the exited child: error %v, want one naming pid %d", err, pid)
	}
}

func TestSamplerCPUIsADeltaBetweenReads(t *testing.T) {
	s := metrics.NewSampler()
	pid := int32(os.Getpid())
	first, err := s.Process(pid)
	if err != nil {
		t.Fatal(err)
	}
	if first.CPUUsage != 0 {
		t.Fatalf("first read CPUUsage = %v, want 0", first.CPUUsage)
	}
	burnCPU(t, 100*time.Millisecond)
	second, err := s.Process(pid)
	if err != nil {
		t.Fatal(err)
	}
	host, err := s.Host()
	if err != nil {
		t.Fatal(err)
	}
	if second.CPUUsage <= 0 || second.CPUUsage > float64(host.NumCPU)*100 {
		t.Fatalf("CPUUsage after a busy loop = %v, want within (0, %d]", second.CPUUsage, host.NumCPU*100)
	}
	s.Forget(pid)
	again, err := s.Process(pid)
	if err != nil {
		t.Fatal(err)
	}
	if again.CPUUsage != 0 {
		t.Fatalf("CPUUsage after Forget = %v, want 0 (a fresh baseline)", again.CPUUsage)
	}
}

func TestSamplerHost(t *testing.T) {
	s := metrics.NewSampler()
	for i := range 2 {
		h, err := s.Host()
		if err != nil {
			t.Fatal(err)
		}
		if h.TotalMemory == 0 || h.AvailableMemory > h.TotalMemory || h.NumCPU < runtime.NumCPU() {
			t.Fatalf("read %d: Host = %+v, want memory figures with available <= total and every usable CPU counted", i, h)
		}
		if h.TotalCPUUsage < 0 || h.TotalCPUUsage > 100 {
			t.Fatalf("read %d: TotalCPUUsage = %v, want within [0, 100]", i, h.TotalCPUUsage)
		}
		busyFor(20 * time.Millisecond)
	}
}
