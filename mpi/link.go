package mpi

import "context"

// roundTrip sends cmd (with the handles released so far) and then, if not
// nil, the tensor send sends after it, and waits for the reply, dropping
// late replies to earlier commands; onReply, if not nil, receives what
// follows a reply without an error. A reply with an error is an ErrRemote
// error. A failure while a tensor is on its way leaves the two processes
// out of step: every later command is an ErrBroken error.
func (r *Remote) roundTrip(ctx context.Context, op string, cmd *command, onReply func(context.Context, *reply) error, send ...func(context.Context) error) (*reply, error) {
	if err := r.begin(ctx, op); err != nil {
		return nil, err
	}
	defer r.end()
	ctx, cancel := r.bound(ctx)
	defer cancel()
	if err := r.send(ctx, cmd, len(send) > 0); err != nil {
		return nil, err
	}
	for _, f := range send {
		if err := f(ctx); err != nil {
			r.broken = err
			return nil, err
		}
	}
	rep, err := r.await(ctx, op, cmd.Seq)
	if err != nil {
		return nil, err
	}
	if onReply != nil {
		if err := onReply(ctx, rep); err != nil {
			if rep.Data {
				r.broken = err
			}
			return nil, err
		}
	}
	return rep, nil
}

// begin takes the Remote's turn, within ctx, and checks that a command may
// be sent: the Remote is open and in step, and ctx is not done (a send
// under a done context may still arrive). end gives the turn back.
func (r *Remote) begin(ctx context.Context, op string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case r.turn <- struct{}{}:
	case <-ctx.Done():
		return r.c.timedOut(op, ctx.Err(), "waiting for the command under way on rank %d", r.rank)
	}
	var err error
	switch {
	case r.closed:
		err = newErr(op, ErrUnavailable, "the remote engine of rank %d is closed", r.rank)
	case r.broken != nil:
		e := newErr(op, ErrBroken, "an earlier operation left rank %d out of step", r.rank)
		e.Err = r.broken
		err = e
	case ctx.Err() != nil:
		err = r.c.timedOut(op, ctx.Err(), "before sending to rank %d", r.rank)
	}
	if err != nil {
		r.end()
	}
	return err
}

// end gives back the turn begin took.
func (r *Remote) end() { <-r.turn }

// send numbers cmd and sends it with the handles released so far. A
// command that a tensor must follow breaks the Remote if it fails: it may
// have arrived all the same, and the tensor would never follow (a command
// without one that arrives late is answered late, and its reply dropped).
func (r *Remote) send(ctx context.Context, cmd *command, followed bool) error {
	r.seq++
	cmd.Seq = r.seq
	r.freeMu.Lock()
	cmd.Free, r.free = r.free, nil
	r.freeMu.Unlock()
	err := r.c.sendJSON(ctx, cmd, r.rank, tagCommand)
	if err != nil {
		// Freed twice if the command arrived: the worker ignores the second.
		r.freeMu.Lock()
		r.free = append(cmd.Free, r.free...)
		r.freeMu.Unlock()
		if followed {
			r.broken = err
		}
	}
	return err
}

// await waits for the reply to command seq, dropping late replies to
// earlier ones. A reply with an error is an ErrRemote error.
func (r *Remote) await(ctx context.Context, op string, seq uint64) (*reply, error) {
	for {
		var rep reply
		if err := r.c.recvJSON(ctx, &rep, r.rank, tagReply); err != nil {
			return nil, err
		}
		if rep.Seq != seq {
			if err := r.drop(ctx, &rep); err != nil {
				r.broken = err
				return nil, err
			}
			continue
		}
		if rep.Err != "" {
			e := newErr(op, ErrRemote, "rank %d: %s", r.rank, rep.Err)
			e.Rank = r.rank
			return nil, e
		}
		return &rep, nil
	}
}

// drop disposes of a late reply: its tensors are released and the tensor
// that follows a get's is received and dropped.
func (r *Remote) drop(ctx context.Context, rep *reply) error {
	if rep.Seq > r.seq {
		return newErr("Recv", ErrMismatch, "reply %d from rank %d to command %d", rep.Seq, r.rank, r.seq)
	}
	if rep.Err != "" {
		return nil
	}
	if rep.Data && len(rep.Results) == 1 {
		t, err := rep.Results[0].zeros()
		if err != nil {
			return err
		}
		return r.c.Recv(ctx, t, r.rank, tagData)
	}
	r.forget(rep.Results)
	return nil
}

// claim records an open Remote of rank and reports whether there was none.
func (c *Comm) claim(rank int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.remotes[rank] {
		return false
	}
	if c.remotes == nil {
		c.remotes = map[int]bool{}
	}
	c.remotes[rank] = true
	return true
}

// unclaim records that rank's Remote is closed.
func (c *Comm) unclaim(rank int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.remotes, rank)
}

// bound applies the Remote's timeout to ctx.
func (r *Remote) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return withTimeout(ctx, r.timeout)
}
