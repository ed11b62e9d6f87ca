package opencl

import (
	"context"
	"errors"
	"sync"
)

// Gate is a user event of a context, opened or failed by the host:
// commands held behind it (Queue.Hold) start only once it opens, and fail
// when it fails. It holds device work back while the host gets something
// ready; tests use it to keep commands pending for as long as they need.
type Gate struct {
	ev   *Event
	once sync.Once
	err  error
}

// NewGate returns a closed gate of the context.
func (c *Context) NewGate() (*Gate, error) {
	e, err := c.userEvent("NewGate")
	if err != nil {
		return nil, err
	}
	return &Gate{ev: e}, nil
}

// userEvent returns a new user event of the context, as an Event without
// a queue.
func (c *Context) userEvent(op string) (*Event, error) {
	if c.isClosed() {
		return nil, newErr(op, ErrReleased, "context closed")
	}
	h, code := cl.userEvent(c.h)
	if code != CodeSuccess {
		return nil, clErr("clCreateUserEvent", code, "")
	}
	return newEvent(nil, h), nil
}

// Open lets the commands held behind g start. Only the first Open or Fail
// of a gate counts; later calls return its result.
func (g *Gate) Open() error { return g.settle(nil) }

// Fail fails g: the commands held behind it fail (their events report an
// error wrapping CodeExecStatusErrorInWait or the code of the failure), as
// does every command ordered after them. Only the first Open or Fail of a
// gate counts.
func (g *Gate) Fail() error { return g.settle(errGateFailed) }

var errGateFailed = errors.New("opencl: gate failed")

// settle opens g (err nil) or fails it.
func (g *Gate) settle(err error) error {
	g.once.Do(func() { g.err = setUser(g.ev, err) })
	return g.err
}

// setUser sets the user event e complete (err nil) or failed: with the
// OpenCL code err wraps when it is one, else
// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
func setUser(e *Event, err error) error {
	status := int32(CodeSuccess)
	if err != nil {
		status = int32(CodeExecStatusErrorInWait)
		var c Code
		if errors.As(err, &c) && c < 0 {
			status = int32(c)
		}
	}
	return clErr("clSetUserEventStatus", cl.setUserStatus(e.h, status), "")
}

// Hold enqueues a barrier on q behind g: the commands enqueued on q after
// it start only once g opens, and fail if g fails. The barrier's event is
// returned. A queue held behind a gate that is never opened nor failed
// never drains: Finish, Close and every wait for its commands block.
func (q *Queue) Hold(ctx context.Context, g *Gate) (*Event, error) {
	if g == nil {
		return nil, newErr("Hold", ErrArgument, "nil gate")
	}
	return q.barrier(ctx, "Hold", g.ev)
}

// barrier enqueues a barrier on q waiting for the events wait (of q's
// context) and every command enqueued on q before it.
func (q *Queue) barrier(ctx context.Context, op string, wait ...*Event) (*Event, error) {
	if err := q.begin(ctx, op); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	wl := make([]clEvent, len(wait))
	for i, e := range wait {
		wl[i] = e.h
	}
	var ev clEvent
	if c := cl.barrier(q.h, wl, &ev); c != CodeSuccess {
		return nil, clErr("clEnqueueBarrierWithWaitList", c, "")
	}
	return q.enqueued(ev, 0), nil
}
