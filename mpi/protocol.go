package mpi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/tensor"
)

// The remote-engine protocol. The process that drives a remote engine
// (NewRemote) sends commands to the process that holds the tensors
// (Serve), one at a time, and waits for each reply:
//
//	hello  → the worker's engine (families, memory budget)
//	exec   → run one instruction on held tensors; the results' handles
//	         and metadata come back
//	put    → the tensor that follows (on tagData) is held; its handle
//	         comes back
//	get    → a held tensor comes back after the reply (on tagData)
//	send   → a held tensor goes to another worker (on tagData), which
//	         was told to recv it
//	recv   → the tensor another worker sends is held; its handle comes
//	         back
//	close  → Serve returns; the reply says how many tensors were still held
//
// Every command carries the handles released since the previous one, so
// that Release sends nothing itself. Commands and replies are JSON
// (instructions in graph's program form), each one message (sendBytes), so
// that a timed-out send either arrives whole or not at all; a reply
// carries its command's sequence number, so that a reply that comes after
// its command timed out is told apart and dropped (its tensors released).
const (
	tagCommand = 32000 // commands
	tagReply   = 32001 // replies
	tagData    = 32002 // tensors of put, get, send and recv
)

// command is one request to a worker.
type command struct {
	Seq     uint64          `json:"seq"`
	Kind    string          `json:"kind"`
	Program json.RawMessage `json:"program,omitempty"` // exec: a one-instruction program
	Args    []uint64        `json:"args,omitempty"`    // exec: operand handles; get: the handle
	Put     *meta           `json:"put,omitempty"`     // put, recv: the tensor that follows
	Peer    int             `json:"peer,omitempty"`    // send, recv: the other worker's rank
	Free    []uint64        `json:"free,omitempty"`    // handles released since the last command
}

// reply is a worker's answer to one command.
type reply struct {
	Seq      uint64   `json:"seq"`
	Err      string   `json:"err,omitempty"`      // the command failed on the worker
	Results  []meta   `json:"results,omitempty"`  // exec, put, recv: the held tensors; get: the tensor that follows
	Families []string `json:"families,omitempty"` // hello
	Memory   int64    `json:"memory,omitempty"`   // hello
	Live     int      `json:"live,omitempty"`     // close: tensors the worker still held
	Data     bool     `json:"data,omitempty"`     // get: the tensor follows on tagData
}

// meta describes a held tensor: its handle and the metadata of its
// buffer on the worker.
type meta struct {
	Handle  uint64 `json:"handle,omitempty"`
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Strides []int  `json:"strides,omitempty"`
	Offset  int    `json:"offset,omitempty"`
	Len     int    `json:"len,omitempty"`
}

// bufferMeta describes b under handle h.
func bufferMeta(h uint64, b *driver.Buffer) meta {
	return meta{Handle: h, DType: b.DType().String(), Shape: b.Shape(), Strides: b.Strides(), Offset: b.Offset(), Len: b.Len()}
}

// tensorMeta describes the type of t (for put and get).
func tensorMeta(t *tensor.Tensor) meta {
	return meta{DType: t.DType().String(), Shape: t.Shape()}
}

// zeros allocates a row-major tensor of m's dtype and shape, to receive
// m's elements in.
func (m meta) zeros() (*tensor.Tensor, error) {
	dt, err := tensor.ParseDType(m.DType)
	if err != nil {
		return nil, err
	}
	return tensor.Zeros(dt, m.Shape...)
}

// sendJSON encodes v and sends it to process dest on tag.
func (c *Comm) sendJSON(ctx context.Context, v any, dest, tag int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return &Error{Op: "Send", Kind: ErrArgument, Rank: -1, Msg: "encoding a message", Err: err}
	}
	return c.sendBytes(ctx, b, dest, tag)
}

// recvJSON receives a message from process src on tag and decodes it into
// v.
func (c *Comm) recvJSON(ctx context.Context, v any, src, tag int) error {
	b, err := c.recvBytes(ctx, src, tag)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &Error{Op: "Recv", Kind: ErrMismatch, Rank: -1, Msg: fmt.Sprintf("undecodable message from process %d", src), Err: err}
	}
	return nil
}
