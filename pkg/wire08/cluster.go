package wire08

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// Node roles and statuses of the cluster metadata.
const (
	RoleLeader   uint8 = 0
	RoleFollower uint8 = 1

	NodeHealthy     uint8 = 0
	maxNodeStatus   uint8 = 4
	maxClusterNodes       = 64
)

// ClusterNode is one node of the cluster metadata.
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

// AppendClusterMetadata appends the reply: the u32-length cluster name, the node count, then
// each node's u32-length name and ip, its four ports, role and status.
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

// DecodeClusterMetadata decodes the reply; more than 64 nodes, or a status above 4, is
// malformed (the SDK refuses both).
func DecodeClusterMetadata(payload []byte) (ClusterMetadata, error) {
	r := NewReader("cluster metadata", payload)
	m := ClusterMetadata{Name: r.String32("cluster name")}
	count := r.U32("node count")
	if r.Err() == nil && count > maxClusterNodes {
		r.Failf("%d nodes, at most %d", count, maxClusterNodes)
	}
	for i := uint32(0); r.Err() == nil && i < count; i++ {
		n := ClusterNode{Name: r.String32("node name"), IP: r.String32("node ip"), TCPPort: r.U16("tcp port"),
			QUICPort: r.U16("quic port"), HTTPPort: r.U16("http port"), WSPort: r.U16("websocket port"),
			Role: r.U8("role"), Status: r.U8("status")}
		if r.Err() == nil && n.Status > maxNodeStatus {
			r.Failf("node status %d is not 0..4", n.Status)
		}
		m.Nodes = append(m.Nodes, n)
	}
	return m, r.Err()
}

// ClientDetails is the GetMe (20) and GetClient (21) reply.
type ClientDetails struct {
	ClientID, UserID uint32
	Transport        uint8 // 1 tcp
	Address          []byte
	Groups           [][3]uint32 // stream, topic and group id of each membership
}

// TransportTCP is ClientDetails.Transport of a TCP client.
const TransportTCP uint8 = 1

// AppendClientDetails appends the reply.
func AppendClientDetails(dst []byte, d ClientDetails) []byte {
	dst = iggywire.AppendU32(dst, d.ClientID)
	dst = iggywire.AppendU32(dst, d.UserID)
	dst = append(dst, d.Transport)
	dst = iggywire.AppendString32(dst, d.Address)
	dst = iggywire.AppendU32(dst, uint32(len(d.Groups)))
	for _, g := range d.Groups {
		dst = iggywire.AppendU32(dst, g[0])
		dst = iggywire.AppendU32(dst, g[1])
		dst = iggywire.AppendU32(dst, g[2])
	}
	return dst
}

// DecodeClientID decodes the GetClient request: the u32 client id.
func DecodeClientID(payload []byte) (uint32, error) {
	r := NewReader("get client", payload)
	id := r.U32("client id")
	return id, r.Err()
}
