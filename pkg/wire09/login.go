package wire09

import (
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// LoginPrefix starts both login body shapes (§5.1).
type LoginPrefix struct {
	ProtocolVersion uint32
	SDKName         []byte
	SDKVersion      []byte
}

// Login is a decoded Register body: a password login, or a token login when
// Token is non-nil. Byte fields alias the body.
type Login struct {
	LoginPrefix
	Username []byte
	Password []byte
	Token    []byte
	Context  []byte
}

// IsToken reports whether the body was a personal-access-token login.
func (l *Login) IsToken() bool { return l.Token != nil }

func appendLoginPrefix(dst []byte, p LoginPrefix) ([]byte, error) {
	if err := iggywire.CheckName("sdk name", p.SDKName, 1); err != nil {
		return dst, err
	}
	if err := iggywire.CheckName("sdk version", p.SDKVersion, 1); err != nil {
		return dst, err
	}
	dst = iggywire.AppendU32(dst, p.ProtocolVersion)
	dst = iggywire.AppendName8(dst, p.SDKName)
	return iggywire.AppendName8(dst, p.SDKVersion), nil
}

// AppendLoginPassword appends a password Register body (from code 40):
// username 1..255 bytes, password 0..255 bytes, empty context.
func AppendLoginPassword(dst []byte, p LoginPrefix, username, password []byte) ([]byte, error) {
	if err := iggywire.CheckName("username", username, 1); err != nil {
		return dst, err
	}
	if err := iggywire.CheckName("password", password, 0); err != nil {
		return dst, err
	}
	dst, err := appendLoginPrefix(dst, p)
	if err != nil {
		return dst, err
	}
	dst = iggywire.AppendName8(dst, username)
	dst = iggywire.AppendName8(dst, password)
	return iggywire.AppendU32(dst, 0), nil
}

// AppendLoginToken appends a personal-access-token Register body (from code 45).
func AppendLoginToken(dst []byte, p LoginPrefix, token []byte) ([]byte, error) {
	if err := iggywire.CheckName("token", token, 1); err != nil {
		return dst, err
	}
	dst, err := appendLoginPrefix(dst, p)
	if err != nil {
		return dst, err
	}
	dst = iggywire.AppendName8(dst, token)
	return iggywire.AppendU32(dst, 0), nil
}

// DecodeLoginPrefix decodes the version prefix; a body without one is what
// the server evicts with reason 15 (MalformedLogin).
func DecodeLoginPrefix(body []byte) (LoginPrefix, []byte, error) {
	r := iggywire.NewReader("login prefix", body)
	p := LoginPrefix{ProtocolVersion: r.U32("protocol version")}
	p.SDKName = r.Name8("sdk name", 1)
	p.SDKVersion = r.Name8("sdk version", 1)
	if r.Err() != nil {
		return LoginPrefix{}, nil, r.Err()
	}
	return p, r.Rest(), nil
}

// DecodeLogin decodes a Register body as the server does: the password shape
// first, the token shape when that fails (§5.1).
func DecodeLogin(body []byte) (Login, error) {
	prefix, rest, err := DecodeLoginPrefix(body)
	if err != nil {
		return Login{}, err
	}
	r := iggywire.NewReader("password login", rest)
	l := Login{LoginPrefix: prefix}
	l.Username = r.Name8("username", 1)
	l.Password = r.Name8("password", 0)
	l.Context = r.String32("context")
	if r.End() == nil {
		if l.Password == nil {
			l.Password = []byte{}
		}
		return l, nil
	}
	r = iggywire.NewReader("token login", rest)
	l = Login{LoginPrefix: prefix}
	l.Token = r.Name8("token", 1)
	l.Context = r.String32("context")
	if err := r.End(); err != nil {
		return Login{}, fmt.Errorf("login body is neither a password nor a token login: %w", err)
	}
	return l, nil
}

// LoginReply is the payload of a successful Register reply, after the result section.
type LoginReply struct {
	UserID          uint32
	Session         uint64
	ProtocolVersion uint32
	ServerVersion   []byte
}

// AppendLoginReply appends the payload (without the result section).
func AppendLoginReply(dst []byte, l LoginReply) []byte {
	dst = iggywire.AppendU32(dst, l.UserID)
	dst = iggywire.AppendU64(dst, l.Session)
	dst = iggywire.AppendU32(dst, l.ProtocolVersion)
	return iggywire.AppendName8(dst, l.ServerVersion[:min(len(l.ServerVersion), 255)])
}

// DecodeLoginReply decodes the payload; trailing bytes are ignored, a zero
// session is an error.
func DecodeLoginReply(payload []byte) (LoginReply, error) {
	r := iggywire.NewReader("login reply", payload)
	l := LoginReply{UserID: r.U32("user id"), Session: r.U64("session"), ProtocolVersion: r.U32("protocol version")}
	l.ServerVersion = r.Name8("server version", 0)
	if r.Err() != nil {
		return LoginReply{}, r.Err()
	}
	if l.Session == 0 {
		return LoginReply{}, iggywire.Malformed("login reply: session is 0")
	}
	return l, nil
}
