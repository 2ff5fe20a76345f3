package wire09

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
	dst = appendString32(dst, m.Name)
	dst = appendU32(dst, uint32(len(m.Nodes)))
	for _, n := range m.Nodes {
		dst = appendString32(dst, n.Name)
		dst = appendString32(dst, n.IP)
		dst = appendU16(dst, n.TCPPort)
		dst = appendU16(dst, n.QUICPort)
		dst = appendU16(dst, n.HTTPPort)
		dst = appendU16(dst, n.WSPort)
		dst = append(dst, n.Role, n.Status)
	}
	return dst
}

// DecodeClusterMetadata decodes the reply; more than 64 nodes is an error, as in the Go SDK.
func DecodeClusterMetadata(body []byte) (ClusterMetadata, error) {
	r := newReader("cluster metadata", body)
	m := ClusterMetadata{Name: r.string32("cluster name")}
	count := r.u32("node count")
	if r.err == nil && count > maxClusterNodes {
		r.failf("%d nodes, at most %d", count, maxClusterNodes)
	}
	if r.err != nil {
		return ClusterMetadata{}, r.err
	}
	m.Nodes = make([]ClusterNode, 0, count)
	for range count {
		n := ClusterNode{Name: r.string32("node name"), IP: r.string32("node ip")}
		n.TCPPort, n.QUICPort, n.HTTPPort, n.WSPort = r.u16("tcp port"), r.u16("quic port"), r.u16("http port"), r.u16("websocket port")
		n.Role, n.Status = r.u8("role"), r.u8("status")
		m.Nodes = append(m.Nodes, n)
	}
	if err := r.end(); err != nil {
		return ClusterMetadata{}, err
	}
	return m, nil
}
