package metrics

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseProcCgroup(t *testing.T) {
	tests := []struct {
		name, data string
		v2, v1     string
		hasV1      bool
	}{
		{"unified", "0::/system.slice/app.service\n", "/system.slice/app.service", "", false},
		{"v1 memory", "12:cpu,cpuacct:/a\n4:memory:/docker/abc\n", "", "/docker/abc", true},
		{"hybrid", "4:memory:/m\n0::/u\n", "/u", "/m", true},
		{"garbage", "nonsense\n", "", "", false},
	}
	for _, tt := range tests {
		v2, v1, hasV1 := parseProcCgroup([]byte(tt.data))
		if v2 != tt.v2 || v1 != tt.v1 || hasV1 != tt.hasV1 {
			t.Errorf("%s: got %q %q %v, want %q %q %v", tt.name, v2, v1, hasV1, tt.v2, tt.v1, tt.hasV1)
		}
	}
}

func TestCgroupFilesRead(t *testing.T) {
	v2 := cgroupFiles{limit: "memory.max", usage: "memory.current", inactive: "inactive_file", active: "active_file"}
	tests := []struct {
		name          string
		files         map[string]string
		wantLimit     uint64
		wantAvailable uint64
		wantCapped    bool
	}{
		{"no limit", map[string]string{"memory.max": "max\n", "memory.current": "100\n"}, 0, 0, false},
		{"limit minus non-reclaimable usage", map[string]string{
			"memory.max": "1000\n", "memory.current": "600\n", "memory.stat": "anon 400\ninactive_file 100\nactive_file 50\n",
		}, 1000, 550, true},
		{"usage above limit clamps to zero", map[string]string{"memory.max": "1000\n", "memory.current": "1500\n"}, 1000, 0, true},
		{"reclaimable above usage clamps to the limit", map[string]string{
			"memory.max": "1000\n", "memory.current": "10\n", "memory.stat": "inactive_file 500\n",
		}, 1000, 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			limit, available, capped := v2.read(dir)
			if limit != tt.wantLimit || available != tt.wantAvailable || capped != tt.wantCapped {
				t.Fatalf("read = %d, %d, %v; want %d, %d, %v", limit, available, capped, tt.wantLimit, tt.wantAvailable, tt.wantCapped)
			}
		})
	}
}
