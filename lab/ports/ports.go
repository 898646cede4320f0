// Package ports picks free TCP ports on loopback for lab components.
//
// A port picked here is free when Free returns; a component that then fails
// to bind it (another process took it meanwhile) should pick again.
package ports

import (
	"fmt"
	"net"
)

// Loopback is the only address lab services listen on.
const Loopback = "127.0.0.1"

// Free returns a TCP port on 127.0.0.1 that nothing listens on now.
func Free() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(Loopback, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
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
