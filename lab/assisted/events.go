package assisted

import (
	"fmt"
	"sync"
	"time"
)

// Event is one thing the service did or saw, served at eventsURL.
type Event struct {
	Time      time.Time `json:"event_time"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Message   string    `json:"message"`
}

// eventLog keeps the recent events in memory.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

const maxEvents = 5000

func newEventLog() *eventLog { return &eventLog{} }

func (l *eventLog) add(ns, name, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, Event{Time: time.Now().UTC(), Namespace: ns, Name: name, Message: fmt.Sprintf(format, args...)})
	if len(l.events) > maxEvents {
		l.events = l.events[len(l.events)-maxEvents:]
	}
}

// list returns the events of a namespace (and name, if given), newest
// last, at most limit (0: all).
func (l *eventLog) list(ns, name string, limit int) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Event{}
	for _, e := range l.events {
		if (ns == "" || e.Namespace == ns) && (name == "" || e.Name == name) {
			out = append(out, e)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}
