package wire09

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// Cluster node roles and statuses (§10.1).
const (
	RoleLeader      uint8 = 0
	RoleFollower    uint8 = 1
	NodeHealthy     uint8 = 0
	maxClusterNodes       = 64
)

// ClusterNode is one roster entry; Name and IP alias the body.
type ClusterNode struct {
	Name, IP                            []byte
	TCPPort, QUICPort, HTTPPort, WSPort uint16
	Role, Status                        uint8
}

// ClusterMetadata is the GetClusterMetadata (12) reply.
type ClusterMetadata struct {
	Name  []byte
	Nodes []ClusterNode
}

// AppendClusterMetadata appends the reply body.
func AppendClusterMetadata(dst []byte, m ClusterMetadata) []byte {
	dst = iggywire.AppendString32(dst, m.Name)
	dst = iggywire.AppendU32(dst, uint32(len(m.Nodes)))
	for _, n := range m.Nodes {
		dst = iggywire.AppendString32(dst, n.Name)
		dst = iggywire.AppendString32(dst, n.IP)
		dst = iggywire.AppendU16(dst, n.TCPPort)
		dst = iggywire.AppendU16(dst, n.QUICPort)
		dst = iggywire.AppendU16(dst, n.HTTPPort)
		dst = iggywire.AppendU16(dst, n.WSPort)
		dst = append(dst, n.Role, n.Status)
	}
	return dst
}

// DecodeClusterMetadata decodes the reply; more than 64 nodes is an error, as in the Go SDK.
func DecodeClusterMetadata(body []byte) (ClusterMetadata, error) {
	r := iggywire.NewReader("cluster metadata", body)
	m := ClusterMetadata{Name: r.String32("cluster name")}
	count := r.U32("node count")
	if r.Err() == nil && count > maxClusterNodes {
		r.Failf("%d nodes, at most %d", count, maxClusterNodes)
	}
	if r.Err() != nil {
		return ClusterMetadata{}, r.Err()
	}
	m.Nodes = make([]ClusterNode, 0, count)
	for range count {
		n := ClusterNode{Name: r.String32("node name"), IP: r.String32("node ip")}
		n.TCPPort, n.QUICPort, n.HTTPPort, n.WSPort = r.U16("tcp port"), r.U16("quic port"), r.U16("http port"), r.U16("websocket port")
		n.Role, n.Status = r.U8("role"), r.U8("status")
		m.Nodes = append(m.Nodes, n)
	}
	if err := r.End(); err != nil {
		return ClusterMetadata{}, err
	}
	return m, nil
}
