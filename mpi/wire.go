package mpi

import (
	"context"
	"encoding/binary"
	"unsafe"

	"github.com/goferro/goferro/tensor"
)

// packBytes returns b as little-endian 64-bit words (MPI moves tensors,
// and goferro has no byte dtype), the last one padded with zeros.
func packBytes(b []byte) []int64 {
	words := make([]int64, (len(b)+7)/8)
	for i := range words {
		var w [8]byte
		copy(w[:], b[8*i:])
		words[i] = int64(binary.LittleEndian.Uint64(w[:]))
	}
	return words
}

// unpackBytes returns the first n bytes of words (packBytes's inverse).
func unpackBytes(words []int64, n int) []byte {
	out := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(w))
	}
	return out[:n]
}

// sendBytes sends b to process dest with tag as one message: its length
// in bytes, then its bytes (packBytes). Being one message, it arrives whole
// or not at all.
func (c *Comm) sendBytes(ctx context.Context, b []byte, dest, tag int) error {
	words := append([]int64{int64(len(b))}, packBytes(b)...)
	t, _ := tensor.New(words, len(words))
	return c.Send(ctx, t, dest, tag)
}

// maxMessage bounds the length of a message recvBytes accepts (1 GiB).
const maxMessage = 1 << 30

// recvBytes receives a message that sendBytes sent from process src with
// tag. It waits for the message with MPI_Iprobe, which takes nothing:
// a wait that times out leaves the message to a later call.
func (c *Comm) recvBytes(ctx context.Context, src, tag int) ([]byte, error) {
	n, err := c.probe(ctx, "Recv", src, tag)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > maxMessage/8+1 {
		return nil, newErr("Recv", ErrMismatch, "a message of %d words from process %d", n, src)
	}
	words := make([]int64, n)
	t, _ := tensor.New(words, n)
	if err := c.Recv(ctx, t, src, tag); err != nil {
		return nil, err
	}
	if words[0] < 0 || (words[0]+7)/8 != int64(n-1) {
		return nil, newErr("Recv", ErrMismatch, "a message of %d words from process %d says it holds %d bytes", n, src, words[0])
	}
	return unpackBytes(words[1:], int(words[0])), nil
}

// probe waits until a message from process src with tag can be received
// and returns its number of 64-bit words.
func (c *Comm) probe(ctx context.Context, op string, src, tag int) (int, error) {
	if err := c.usable(op); err != nil {
		return 0, err
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	var status [statusSize]byte
	var flag, count, code int32
	iprobe := func() {
		code = call(c.lib.fn.iprobe, uintptr(src), uintptr(tag), c.handle, uintptr(unsafe.Pointer(&flag)), uintptr(unsafe.Pointer(&status[0])))
		if code == 0 && flag != 0 {
			code = call(c.lib.fn.getCount, uintptr(unsafe.Pointer(&status[0])), c.lib.h.dtypes[tensor.Int64], uintptr(unsafe.Pointer(&count)))
		}
	}
	var pace backoff
	defer pace.stop()
	for {
		flag = 0
		if err := c.run(ctx, iprobe); err != nil {
			return 0, c.timedOut(op, err, "waiting for a message from process %d", src)
		}
		if code != 0 {
			return 0, c.mpiErr("MPI_Iprobe", code)
		}
		if flag != 0 {
			return int(count), nil
		}
		if !pace.wait(ctx) {
			return 0, c.timedOut(op, ctx.Err(), "waiting for a message from process %d", src)
		}
	}
}
