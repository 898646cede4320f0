package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// SetFault makes the server misbehave for one system (by ID or name) until
// ClearFault, or for the next Fault.Count requests it affects.
func (s *Server) SetFault(ctx context.Context, system string, f Fault) error {
	if err := f.validate(); err != nil {
		return fmt.Errorf("set fault: %w", err)
	}
	id, err := s.systemID(ctx, system)
	if err != nil {
		return fmt.Errorf("set fault: %w", err)
	}
	if f.Hang != "" {
		return s.hang(ctx, id, f)
	}
	s.faults.set(id, f)
	s.log.Info("Fault set", "system", id, "status", f.Status, "latency", f.Latency.String(), "ignorePower", f.IgnorePower, "count", f.Count)
	return nil
}

// hang sets a hang fault and freezes the system when it is on. The
// operation log records it (fault:hang), so that a host's power timeline
// shows when it failed.
func (s *Server) hang(ctx context.Context, id string, f Fault) error {
	fr, ok := s.backend.(Freezer)
	if !ok {
		return fmt.Errorf("set fault: this emulator's backend cannot freeze a system: %w", ErrInvalid)
	}
	s.faults.set(id, f)
	if err := s.freezeIfOn(ctx, fr, id); err != nil {
		s.faults.clear(id)
		return fmt.Errorf("set fault: %w", err)
	}
	s.recordOperation(id, opFaultHang)
	s.log.Info("Fault set", "system", id, "hang", f.Hang)
	return nil
}

func (s *Server) freezeIfOn(ctx context.Context, fr Freezer, id string) error {
	sys, err := s.backend.System(ctx, id)
	if err != nil {
		return err
	}
	if sys.PowerState != PowerOn {
		return nil
	}
	return fr.Freeze(ctx, id)
}

// afterReset keeps a hang fault's promise once a power action is done:
// a power-off ends an untilPowerOff hang, and a system that hangs always
// freezes again when it is on.
func (s *Server) afterReset(ctx context.Context, id string) error {
	f, ok := s.faults.get(id)
	if !ok || f.Hang == "" {
		return nil
	}
	sys, err := s.backend.System(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case f.Hang == HangUntilPowerOff && sys.PowerState == PowerOff:
		if s.faults.clearHang(id) {
			s.log.Info("Hang ended by the power-off", "system", id)
		}
	case f.Hang == HangAlways && sys.PowerState == PowerOn:
		fr, ok := s.backend.(Freezer)
		if !ok {
			return nil
		}
		return fr.Freeze(ctx, id)
	}
	return nil
}

// ClearFault removes the fault of a system (by ID or name), if any.
func (s *Server) ClearFault(ctx context.Context, system string) error {
	id, err := s.systemID(ctx, system)
	if err != nil {
		return fmt.Errorf("clear fault: %w", err)
	}
	s.faults.clear(id)
	return nil
}

// FaultOf returns the fault set on a system, with its remaining Count.
func (s *Server) FaultOf(ctx context.Context, system string) (Fault, bool, error) {
	id, err := s.systemID(ctx, system)
	if err != nil {
		return Fault{}, false, fmt.Errorf("get fault: %w", err)
	}
	f, ok := s.faults.get(id)
	return f, ok, nil
}

// systemID maps an ID or a name to the system's ID.
func (s *Server) systemID(ctx context.Context, system string) (string, error) {
	sys, err := s.backend.System(ctx, system)
	if err == nil {
		return sys.ID, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	return s.backend.Resolve(ctx, system)
}

// faultJSON is a Fault on the admin API: latency as a Go duration string.
type faultJSON struct {
	Status      int    `json:"status,omitempty"`
	Latency     string `json:"latency,omitempty"`
	IgnorePower bool   `json:"ignorePower,omitempty"`
	Count       int    `json:"count,omitempty"`
	Hang        string `json:"hang,omitempty"`
}

func toFaultJSON(f Fault) faultJSON {
	out := faultJSON{Status: f.Status, IgnorePower: f.IgnorePower, Count: f.Count, Hang: string(f.Hang)}
	if f.Latency > 0 {
		out.Latency = f.Latency.String()
	}
	return out
}

// getFault answers the fault of a system, {} when there is none.
func (s *Server) getFault(w http.ResponseWriter, _ *http.Request, rq *request) error {
	f, _ := s.faults.get(rq.system.ID)
	writeJSON(w, http.StatusOK, toFaultJSON(f))
	return nil
}

func (s *Server) putFault(w http.ResponseWriter, r *http.Request, rq *request) error {
	body, err := readObject(w, r)
	if err != nil {
		return err
	}
	f, err := parseFault(body)
	if err != nil {
		return err
	}
	if err := s.SetFault(r.Context(), rq.system.ID, f); err != nil {
		return backendError(err, "GeneralError", "ResourceInUse")
	}
	writeJSON(w, http.StatusOK, toFaultJSON(f))
	return nil
}

func (s *Server) deleteFault(w http.ResponseWriter, _ *http.Request, rq *request) error {
	s.faults.clear(rq.system.ID)
	return noContent(w)
}

func parseFault(body object) (Fault, error) {
	var f Fault
	allowed := []string{"status", "latency", "ignorePower", "count", "hang"}
	if k := body.unknown(allowed...); k != "" {
		return f, errPropertyUnknown("#/"+k, allowed)
	}
	var terr *typeError
	if f.Status, _, terr = body.integer("status"); terr != nil {
		return f, errPropertyType("#/status", terr.raw, "an integer HTTP status")
	}
	if f.IgnorePower, _, terr = body.boolean("ignorePower"); terr != nil {
		return f, errPropertyType("#/ignorePower", terr.raw, "a boolean")
	}
	if f.Count, _, terr = body.integer("count"); terr != nil {
		return f, errPropertyType("#/count", terr.raw, "an integer")
	}
	hang, _, terr := body.str("hang")
	if terr != nil {
		return f, errPropertyType("#/hang", terr.raw, fmt.Sprintf("a string, one of %v", HangModes))
	}
	f.Hang = HangMode(hang)
	latency, ok, terr := body.str("latency")
	if terr != nil {
		return f, errPropertyType("#/latency", terr.raw, `a duration string such as "2s"`)
	}
	if ok {
		d, err := time.ParseDuration(latency)
		if err != nil {
			return f, errPropertyValue("#/latency", latency, `want a duration such as "500ms" or "2s"`)
		}
		f.Latency = d
	}
	if err := f.validate(); err != nil {
		return f, newError(http.StatusBadRequest, "PropertyValueIncorrect",
			fmt.Sprintf("The fault is not valid: %v.", err), "Correct the fault and resubmit the request.")
	}
	return f, nil
}
