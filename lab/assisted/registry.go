package assisted

import (
	"strconv"
	"sync"
	"time"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// registry is what the service keeps in memory about connected hosts: when
// each last called, and the steps waiting for it. Everything durable lives
// in the Agent objects.
type registry struct {
	mu    sync.Mutex
	hosts map[string]*hostEntry
	seq   int
}

type hostEntry struct {
	infraEnvID string
	lastSeen   time.Time
	steps      []agentapi.Step
}

func newRegistry() *registry { return &registry{hosts: map[string]*hostEntry{}} }

// register records a host (again, after a reboot) and asks for inventory.
func (r *registry) register(hostID, infraEnvID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[hostID] = &hostEntry{infraEnvID: infraEnvID, lastSeen: time.Now()}
	r.queueLocked(hostID, agentapi.StepInventory, nil)
}

func (r *registry) known(hostID, infraEnvID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.hosts[hostID]
	return ok && h.infraEnvID == infraEnvID
}

// next hands out the pending steps and records the contact.
func (r *registry) next(hostID string) []agentapi.Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.hosts[hostID]
	if !ok {
		return nil
	}
	h.lastSeen = time.Now()
	steps := h.steps
	h.steps = nil
	return steps
}

func (r *registry) queue(hostID, stepType string, args []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queueLocked(hostID, stepType, args)
}

func (r *registry) queueLocked(hostID, stepType string, args []byte) {
	h, ok := r.hosts[hostID]
	if !ok {
		return
	}
	for _, s := range h.steps {
		if s.StepType == stepType {
			return
		}
	}
	r.seq++
	h.steps = append(h.steps, agentapi.Step{StepID: stepType + "-" + strconv.Itoa(r.seq), StepType: stepType, Args: args})
}

// lastSeen is when a host last called, zero if never.
func (r *registry) lastSeen(hostID string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.hosts[hostID]; ok {
		return h.lastSeen
	}
	return time.Time{}
}

func (r *registry) forget(hostID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.hosts, hostID)
}
