package devbroker

import (
	"fmt"
	"testing"
	"time"
)

// assignment renders members' partitions as "[0 1] [2]" for compact expectations; a partition
// pending revocation carries a star: "[0 1*] []".
func assignment(g *group) string {
	out := ""
	for i, m := range g.members {
		if i > 0 {
			out += " "
		}
		out += "["
		for j, p := range m.partitions {
			if j > 0 {
				out += " "
			}
			out += fmt.Sprint(p)
			if m.revoking(p) {
				out += "*"
			}
		}
		out += "]"
	}
	return out
}

func TestGroupAssignment(t *testing.T) {
	tests := []struct {
		name       string
		partitions uint32
		// "join N" or "leave N" (N = client id); "busy P": the group polled partition P and has not
		// committed it; "commit P": it has, and the commit settles pending revocations.
		steps []string
		want  []string // assignment after each step
	}{
		{
			name:       "cooperative joins, spec example",
			partitions: 3,
			steps:      []string{"join 1", "join 2", "join 3"},
			want:       []string{"[0 1 2]", "[0 1] [2]", "[0] [2] [1]"},
		},
		{
			name:       "more members than partitions leaves the extra idle",
			partitions: 2,
			steps:      []string{"join 1", "join 2", "join 3"},
			want:       []string{"[0 1]", "[0] [1]", "[0] [1] []"},
		},
		{
			name:       "one partition per idle member, and leave deals everything anew",
			partitions: 4,
			steps:      []string{"join 1", "join 2", "join 3", "leave 1"},
			want:       []string{"[0 1 2 3]", "[0 1 2] [3]", "[0 1] [3] [2]", "[0 2] [1 3]"},
		},
		{
			name:       "a partition with a batch in flight moves after its commit, not before",
			partitions: 2,
			steps:      []string{"join 1", "busy 1", "join 2", "join 3", "commit 1"},
			want:       []string{"[0 1]", "[0 1]", "[0 1*] []", "[0 1*] [] []", "[0] [1] []"},
		},
		{
			name:       "leaving drops pending revocations and deals anew",
			partitions: 2,
			steps:      []string{"join 1", "busy 1", "join 2", "leave 2"},
			want:       []string{"[0 1]", "[0 1]", "[0 1*] []", "[0 1]"},
		},
		{
			name:       "joining twice is a no-op",
			partitions: 2,
			steps:      []string{"join 1", "join 1"},
			want:       []string{"[0 1]", "[0 1]"},
		},
		{
			name:       "an idle member picks up partitions nobody owns",
			partitions: 0,
			steps:      []string{"join 1", "grow 2", "join 2"},
			want:       []string{"[]", "[0 1]", "[0] [1]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &group{}
			busy := map[uint32]bool{}
			released := func(p uint32) bool { return !busy[p] }
			for p := range tc.partitions {
				g.partitions = append(g.partitions, p)
			}
			for i, step := range tc.steps {
				var op string
				var n uint32
				if _, err := fmt.Sscanf(step, "%s %d", &op, &n); err != nil {
					t.Fatalf("bad step %q", step)
				}
				switch op {
				case "join":
					g.join(n, released)
				case "busy":
					busy[n] = true
				case "commit":
					busy[n] = false
					g.settleRevocations(released, 0)
				case "leave":
					if !g.leave(n) {
						t.Fatalf("step %q: client %d was not a member", step, n)
					}
				case "grow":
					g.resetPartitions(n)
				}
				if got := assignment(g); got != tc.want[i] {
					t.Fatalf("after %v: assignment %s, want %s", tc.steps[:i+1], got, tc.want[i])
				}
			}
		})
	}
}

func TestMemberRoundRobin(t *testing.T) {
	m := &member{partitions: []uint32{4, 7, 9}}
	var got []uint32
	for range 4 {
		p, _ := m.nextPartition(true)
		got = append(got, p)
	}
	if fmt.Sprint(got) != "[4 7 9 4]" {
		t.Errorf("round robin = %v, want [4 7 9 4]", got)
	}
	if p, _ := m.nextPartition(false); p != 7 {
		t.Errorf("peek after four polls = %d, want 7 (the cursor points at the next partition)", p)
	}
	if _, ok := (&member{}).nextPartition(true); ok {
		t.Error("a member without partitions got one")
	}
	revoking := &member{partitions: []uint32{4, 7}, pending: []revocation{{partition: 7}}}
	for range 3 {
		if p, _ := revoking.nextPartition(true); p != 4 {
			t.Fatalf("round robin gave %d, a partition pending revocation", p)
		}
	}
}

// A hand-over still pending after the rebalancing timeout happens anyway, as Iggy 0.8's
// revocation timeout forces it.
func TestRevocationTimesOut(t *testing.T) {
	g := &group{partitions: []uint32{0, 1}}
	never := func(uint32) bool { return false }
	g.join(1, never)
	g.join(2, never)
	if got := assignment(g); got != "[0 1*] []" {
		t.Fatalf("assignment %s, want the hand-over pending", got)
	}
	g.settleRevocations(never, time.Nanosecond)
	if got := assignment(g); got != "[0] [1]" {
		t.Fatalf("assignment after the timeout %s, want [0] [1]", got)
	}
}
