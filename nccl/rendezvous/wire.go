package rendezvous

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The wire format. Every message is a frame: a 20-byte header, then the body.
//
//	offset size
//	0      4    magic 0x47505552 ("GPUR"), big-endian like every integer here
//	4      2    protocol version
//	6      1    kind
//	7      1    reserved, 0
//	8      8    sequence number of the operation (0 during the handshake)
//	16     4    body length
//
// The header keeps this layout in every version, so that a peer of another version can
// still read a rejection.
const (
	magic         uint32 = 0x47505552
	protoVersion  uint16 = 1
	headerLen            = 20
	maxReasonLen         = 4 << 10
	helloBodyLen         = 8 // world uint32, rank uint32
	handshakeBody        = MaxPayload + maxReasonLen
)

// MaxPayload is the largest payload of Rendezvous and of each rank's AllGather data.
const MaxPayload = 1 << 20

type kind uint8

const (
	kindHello   kind = 1 // rank > 0 to rank 0: world, rank
	kindWelcome kind = 2 // rank 0 to rank > 0: the group is complete; body: rank 0's payload
	kindReject  kind = 3 // rank 0 to a joining rank: body: reason
	kindGather  kind = 4 // rank > 0 to rank 0: this rank's AllGather data
	kindBarrier kind = 5 // rank > 0 to rank 0: this rank reached the barrier
	kindResult  kind = 6 // rank 0 to rank > 0: the operation's result
	kindAbort   kind = 7 // either way: the sender gives up on the group; body: reason
	kindBye     kind = 8 // either way: the sender closed the group
)

func (k kind) String() string {
	switch k {
	case kindHello:
		return "hello"
	case kindWelcome:
		return "welcome"
	case kindReject:
		return "reject"
	case kindGather:
		return "AllGather"
	case kindBarrier:
		return "Barrier"
	case kindResult:
		return "result"
	case kindAbort:
		return "abort"
	case kindBye:
		return "bye"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

type frame struct {
	kind kind
	seq  uint64
	body []byte
}

// encode returns the frame as bytes, to be written in one Write.
func (f frame) encode() []byte {
	b := make([]byte, headerLen+len(f.body))
	binary.BigEndian.PutUint32(b[0:], magic)
	binary.BigEndian.PutUint16(b[4:], protoVersion)
	b[6] = byte(f.kind)
	binary.BigEndian.PutUint64(b[8:], f.seq)
	binary.BigEndian.PutUint32(b[16:], uint32(len(f.body)))
	copy(b[headerLen:], f.body)
	return b
}

// errBadMagic: the peer does not speak this protocol at all.
var errBadMagic = errors.New("bad magic: the peer is not a rendezvous peer")

// versionError: the peer speaks another version of the protocol.
type versionError struct{ theirs uint16 }

func (e *versionError) Error() string {
	return fmt.Sprintf("protocol version %d, this side speaks %d", e.theirs, protoVersion)
}

// readFrame reads one frame whose body is at most limit bytes.
func readFrame(r io.Reader, limit int) (frame, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	if binary.BigEndian.Uint32(h[0:]) != magic {
		return frame{}, errBadMagic
	}
	if v := binary.BigEndian.Uint16(h[4:]); v != protoVersion {
		return frame{}, &versionError{v}
	}
	f := frame{kind: kind(h[6]), seq: binary.BigEndian.Uint64(h[8:])}
	n := binary.BigEndian.Uint32(h[16:])
	if uint64(n) > uint64(limit) {
		return frame{}, fmt.Errorf("%v frame of %d bytes exceeds the limit of %d", f.kind, n, limit)
	}
	if n > 0 {
		f.body = make([]byte, n)
		if _, err := io.ReadFull(r, f.body); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return frame{}, err
		}
	}
	return f, nil
}

// reason truncates a text to fit a reject or abort frame.
func reason(s string) []byte {
	if len(s) > maxReasonLen {
		s = s[:maxReasonLen]
	}
	return []byte(s)
}

// encodeList encodes an AllGather result: for each rank, a uint32 length and the bytes.
func encodeList(parts [][]byte) []byte {
	n := 0
	for _, p := range parts {
		n += 4 + len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

// decodeList decodes an AllGather result of world parts.
func decodeList(b []byte, world int) ([][]byte, error) {
	parts := make([][]byte, world)
	for i := range parts {
		if len(b) < 4 {
			return nil, fmt.Errorf("truncated result (part %d of %d)", i, world)
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, fmt.Errorf("truncated result (part %d of %d)", i, world)
		}
		parts[i] = b[:n:n]
		b = b[n:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d stray bytes after the result", len(b))
	}
	return parts, nil
}

// resultLimit is the largest AllGather result frame for world ranks.
func resultLimit(world int) int {
	return world * (4 + MaxPayload)
}
