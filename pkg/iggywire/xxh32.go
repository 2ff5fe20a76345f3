package iggywire

import (
	"encoding/binary"
	"math/bits"
)

// XXH32 is XXH32 with seed 0. The server uses it for MessagesKey partitioning
// and to turn a named single consumer into a numeric offset key.
func XXH32(b []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	round := func(acc, lane uint32) uint32 {
		acc += lane * p2
		acc = bits.RotateLeft32(acc, 13)
		return acc * p1
	}
	n := len(b)
	var h uint32
	if n >= 16 {
		var seed uint32 // a variable, so the additions below wrap at run time
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for len(b) >= 16 {
			v1 = round(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h += binary.LittleEndian.Uint32(b) * p3
		h = bits.RotateLeft32(h, 17) * p4
		b = b[4:]
	}
	for _, c := range b {
		h += uint32(c) * p5
		h = bits.RotateLeft32(h, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
