// Package ports picks free TCP ports on loopback for lab components.
//
// A port picked here is free when Free returns; a component that then fails
// to bind it (another process took it meanwhile) should pick again.
package ports

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// Loopback is the address lab services listen on, and the one the lab's
// VMs reach at their user-mode gateway.
const Loopback = "127.0.0.1"

// Unrouted is a loopback address the VMs cannot reach: QEMU user-mode
// networking takes a guest's connections to its gateway to 127.0.0.1
// only, and a guest's own 127.0.0.0/8 never leaves it. A service that
// stands for one off the lab's network (the public registry of a
// disconnected site) listens here.
const Unrouted = "127.0.0.2"

// Free returns a TCP port on 127.0.0.1 that nothing listens on now.
func Free() (int, error) { return FreeOn(Loopback) }

// FreeOn returns a TCP port on a loopback address that nothing listens
// on now.
func FreeOn(address string) (int, error) {
	if ip := net.ParseIP(address); ip == nil || !ip.IsLoopback() {
		return 0, fmt.Errorf("find a free port: %q is not a loopback address", address)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(address, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", address, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeN returns n distinct free ports. All n listeners are held until the
// end so the kernel cannot hand the same port out twice.
func FreeN(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(Loopback, "0"))
		if err != nil {
			return nil, fmt.Errorf("find a free loopback port: %w", err)
		}
		held = append(held, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// Taken says an error is a listener's failure to bind a port another
// socket holds: the component that picked it should pick again.
func Taken(err error) bool {
	return err != nil && (errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use"))
}
