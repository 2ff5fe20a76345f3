package wire08

import (
	"encoding/binary"

	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// LoginUser is the LoginUser (38) request. Version and Context are sent by the SDK and
// ignored by the server; a request may end after the password.
type LoginUser struct {
	Username, Password []byte
	Version, Context   []byte
}

// AppendLoginUser appends the request payload: u8-length username and password, then the
// u32-length version and context. Username and password must be 1..255 bytes.
func AppendLoginUser(dst []byte, l LoginUser) ([]byte, error) {
	if err := iggywire.CheckName("username", l.Username, 1); err != nil {
		return dst, err
	}
	if err := iggywire.CheckName("password", l.Password, 1); err != nil {
		return dst, err
	}
	dst = iggywire.AppendName8(dst, l.Username)
	dst = iggywire.AppendName8(dst, l.Password)
	dst = iggywire.AppendString32(dst, l.Version)
	return iggywire.AppendString32(dst, l.Context), nil
}

// DecodeLoginUser decodes the request payload; version and context are read when present.
func DecodeLoginUser(payload []byte) (LoginUser, error) {
	r := NewReader("login user", payload)
	l := LoginUser{Username: r.Name8("username", 0), Password: r.Name8("password", 0)}
	if r.Err() == nil && r.Remaining() > 0 {
		l.Version = r.String32("version")
		l.Context = r.String32("context")
	}
	return l, r.Err()
}

// AppendLoginToken appends the LoginWithPersonalAccessToken (44) payload: the u8-length token.
func AppendLoginToken(dst, token []byte) ([]byte, error) {
	if err := iggywire.CheckName("personal access token", token, 1); err != nil {
		return dst, err
	}
	return iggywire.AppendName8(dst, token), nil
}

// DecodeLoginToken decodes the token (empty is InvalidFormat).
func DecodeLoginToken(payload []byte) ([]byte, error) {
	r := NewReader("login with token", payload)
	token := r.Name8("token", 1)
	return token, r.Err()
}

// LoginReplySize is the login reply: the u32 user id.
const LoginReplySize = 4

// AppendLoginReply appends the reply of both logins.
func AppendLoginReply(dst []byte, userID uint32) []byte { return iggywire.AppendU32(dst, userID) }

// DecodeLoginReply reads the user id of a login reply.
func DecodeLoginReply(payload []byte) (uint32, error) {
	if len(payload) != LoginReplySize {
		return 0, iggywire.Malformed("login reply is not the 4-byte user id")
	}
	return binary.LittleEndian.Uint32(payload), nil
}
