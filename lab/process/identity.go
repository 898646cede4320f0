package process

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Identity names one running process unambiguously: a PID together with the
// kernel's start time of that PID, so a recycled PID never matches.
type Identity struct {
	// Name is the component the process is, e.g. "etcd".
	Name string `json:"name"`
	// PID is the process id.
	PID int `json:"pid"`
	// StartTicks is field 22 of /proc/<pid>/stat: the process start time in
	// clock ticks since boot.
	StartTicks uint64 `json:"startTicks"`
}

// IdentityOf reads the identity of a running process.
func IdentityOf(name string, pid int) (Identity, error) {
	ticks, err := startTicks(pid)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Name: name, PID: pid, StartTicks: ticks}, nil
}

// Alive reports whether the process this identity names still runs. A zombie
// (exited, not yet reaped by its parent) counts as not alive.
func (id Identity) Alive() bool {
	st, err := readStat(id.PID)
	if err != nil {
		return false
	}
	return st.startTicks == id.StartTicks && st.state != 'Z' && st.state != 'X'
}

// Signal sends sig to the process if, and only if, it is still the process
// this identity names.
func (id Identity) Signal(sig syscall.Signal) error {
	if !id.Alive() {
		return ErrGone
	}
	if err := syscall.Kill(id.PID, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return ErrGone
		}
		return fmt.Errorf("signal %s (pid %d): %w", id.Name, id.PID, err)
	}
	return nil
}

func (id Identity) String() string {
	return fmt.Sprintf("%s (pid %d)", id.Name, id.PID)
}

// ErrGone says the process already exited.
var ErrGone = errors.New("process is gone")

type procStat struct {
	state      byte
	startTicks uint64
}

func startTicks(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.startTicks, err
}

// readStat parses /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'.
func readStat(pid int) (procStat, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	return parseStat(string(raw))
}

func parseStat(raw string) (procStat, error) {
	end := strings.LastIndexByte(raw, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("malformed /proc stat %q", raw)
	}
	// Fields after the name start with field 3 (state); starttime is field 22.
	fields := strings.Fields(raw[end+1:])
	if len(fields) < 20 || len(fields[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed /proc stat %q", raw)
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("parse start time in /proc stat: %w", err)
	}
	return procStat{state: fields[0][0], startTicks: ticks}, nil
}
