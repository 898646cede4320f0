package redfish

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// maxOperations bounds the log of one system: a long-running emulator
// (a scale run, a lab left up for days) must not grow without limit, and
// no scenario reads back more than a few hundred operations per host.
const maxOperations = 10000

// Operation is one state-changing request the server carried out for a
// system: "power:<ResetType>", "media:insert", "media:eject" or
// "boot:<BootSourceOverrideTarget>/<BootSourceOverrideEnabled>"; and
// "fault:hang" when a hang fault froze it.
type Operation struct {
	// At is when the server carried it out, in UTC.
	At time.Time `json:"at"`
	// Operation says what it was.
	Operation string `json:"operation"`
}

// Operations returns the operations carried out for a system (by ID or
// name, as SetFault), oldest first, those at or after since only; a zero
// since returns the whole log (the newest 10000).
func (s *Server) Operations(ctx context.Context, system string, since time.Time) ([]Operation, error) {
	id, err := s.systemID(ctx, system)
	if err != nil {
		return nil, fmt.Errorf("operations: %w", err)
	}
	return s.ops.list(id, since), nil
}

// recordOperation logs an operation the server just carried out. Handlers
// call it before answering, so a client that got the answer finds the
// operation in the log.
func (s *Server) recordOperation(id, op string) {
	s.ops.add(id, op)
	s.log.Info("BMC operation", "system", id, "operation", op)
}

func powerOperation(rt ResetType) string { return "power:" + string(rt) }

func bootOperation(b Boot) string { return "boot:" + b.Target + "/" + b.Enabled }

const (
	opMediaInsert = "media:insert"
	opMediaEject  = "media:eject"
	// opFaultHang is a hang fault set on the system: not a request to
	// the BMC, but when the server it manages failed.
	opFaultHang = "fault:hang"
)

// opLog holds the operations of every system, by system ID.
type opLog struct {
	mu    sync.Mutex
	limit int
	now   func() time.Time
	rings map[string]*opRing
}

// opRing is the newest operations of one system: ops grows up to the
// limit, then next is where the oldest entry gets overwritten.
type opRing struct {
	ops  []Operation
	next int
}

func newOpLog(limit int) *opLog {
	return &opLog{limit: limit, now: time.Now, rings: map[string]*opRing{}}
}

// add appends an operation stamped now. The time is read under the lock
// so that log order and time order agree; it is a wall-clock time
// (monotonic reading stripped) held back to the previous entry's if the
// clock stepped backwards, so since-filtering and the timelines built
// from the log never see time run backwards.
func (l *opLog) add(id, op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rings[id]
	if r == nil {
		r = &opRing{}
		l.rings[id] = r
	}
	at := l.now().UTC().Round(0)
	if last, ok := r.last(); ok && at.Before(last.At) {
		at = last.At
	}
	o := Operation{At: at, Operation: op}
	if len(r.ops) < l.limit {
		r.ops = append(r.ops, o)
		return
	}
	r.ops[r.next] = o
	r.next = (r.next + 1) % len(r.ops)
}

// list copies the operations of a system at or after since, oldest first.
// It never returns nil, so the JSON body always has a list.
func (l *opLog) list(id string, since time.Time) []Operation {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Operation{}
	r := l.rings[id]
	if r == nil {
		return out
	}
	for _, part := range [][]Operation{r.ops[r.next:], r.ops[:r.next]} {
		for _, o := range part {
			if !o.At.Before(since) {
				out = append(out, o)
			}
		}
	}
	return out
}

func (r *opRing) last() (Operation, bool) {
	if len(r.ops) == 0 {
		return Operation{}, false
	}
	return r.ops[(r.next+len(r.ops)-1)%len(r.ops)], true
}
