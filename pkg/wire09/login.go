package wire09

import "fmt"

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
	if err := checkName("sdk name", p.SDKName, 1); err != nil {
		return dst, err
	}
	if err := checkName("sdk version", p.SDKVersion, 1); err != nil {
		return dst, err
	}
	dst = appendU32(dst, p.ProtocolVersion)
	dst = appendName8(dst, p.SDKName)
	return appendName8(dst, p.SDKVersion), nil
}

// AppendLoginPassword appends a password Register body (from code 40):
// username 1..255 bytes, password 0..255 bytes, empty context.
func AppendLoginPassword(dst []byte, p LoginPrefix, username, password []byte) ([]byte, error) {
	if err := checkName("username", username, 1); err != nil {
		return dst, err
	}
	if err := checkName("password", password, 0); err != nil {
		return dst, err
	}
	dst, err := appendLoginPrefix(dst, p)
	if err != nil {
		return dst, err
	}
	dst = appendName8(dst, username)
	dst = appendName8(dst, password)
	return appendU32(dst, 0), nil
}

// AppendLoginToken appends a personal-access-token Register body (from code 45).
func AppendLoginToken(dst []byte, p LoginPrefix, token []byte) ([]byte, error) {
	if err := checkName("token", token, 1); err != nil {
		return dst, err
	}
	dst, err := appendLoginPrefix(dst, p)
	if err != nil {
		return dst, err
	}
	dst = appendName8(dst, token)
	return appendU32(dst, 0), nil
}

// DecodeLoginPrefix decodes the version prefix; a body without one is what
// the server evicts with reason 15 (MalformedLogin).
func DecodeLoginPrefix(body []byte) (LoginPrefix, []byte, error) {
	r := newReader("login prefix", body)
	p := LoginPrefix{ProtocolVersion: r.u32("protocol version")}
	p.SDKName = r.name8("sdk name", 1)
	p.SDKVersion = r.name8("sdk version", 1)
	if r.err != nil {
		return LoginPrefix{}, nil, r.err
	}
	return p, r.buf[r.pos:], nil
}

// DecodeLogin decodes a Register body as the server does: the password shape
// first, the token shape when that fails (§5.1).
func DecodeLogin(body []byte) (Login, error) {
	prefix, rest, err := DecodeLoginPrefix(body)
	if err != nil {
		return Login{}, err
	}
	r := newReader("password login", rest)
	l := Login{LoginPrefix: prefix}
	l.Username = r.name8("username", 1)
	l.Password = r.name8("password", 0)
	l.Context = r.string32("context")
	if r.end() == nil {
		if l.Password == nil {
			l.Password = []byte{}
		}
		return l, nil
	}
	r = newReader("token login", rest)
	l = Login{LoginPrefix: prefix}
	l.Token = r.name8("token", 1)
	l.Context = r.string32("context")
	if err := r.end(); err != nil {
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
	dst = appendU32(dst, l.UserID)
	dst = appendU64(dst, l.Session)
	dst = appendU32(dst, l.ProtocolVersion)
	return appendName8(dst, l.ServerVersion[:min(len(l.ServerVersion), 255)])
}

// DecodeLoginReply decodes the payload; trailing bytes are ignored, a zero
// session is an error.
func DecodeLoginReply(payload []byte) (LoginReply, error) {
	r := newReader("login reply", payload)
	l := LoginReply{UserID: r.u32("user id"), Session: r.u64("session"), ProtocolVersion: r.u32("protocol version")}
	l.ServerVersion = r.name8("server version", 0)
	if r.err != nil {
		return LoginReply{}, r.err
	}
	if l.Session == 0 {
		return LoginReply{}, malformed("login reply: session is 0")
	}
	return l, nil
}
