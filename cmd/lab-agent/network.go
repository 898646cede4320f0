package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// defaultGateway reads the IPv4 default route from /proc/net/route. Under
// QEMU user-mode networking the gateway is the host, where lab services
// listen.
func (s *system) defaultGateway() (string, error) {
	f, err := os.Open(s.path("proc/net/route"))
	if err != nil {
		return "", fmt.Errorf("read routes: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// Iface Destination Gateway Flags ...; default has destination 0.
		if len(fields) < 3 || fields[1] != "00000000" {
			continue
		}
		raw, err := hex.DecodeString(fields[2])
		if err != nil || len(raw) != 4 {
			continue
		}
		ip := make(net.IP, 4)
		binary.BigEndian.PutUint32(ip, binary.LittleEndian.Uint32(raw))
		return ip.String(), nil
	}
	return "", errors.New("no default route (did DHCP run?)")
}

// serviceHost is where the host's services are: an explicit host, else the
// default gateway.
func (s *system) serviceHost(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	return s.defaultGateway()
}

// primaryIPv4 is the first IPv4 address of a non-loopback interface.
func (s *system) primaryIPv4() string {
	for _, nic := range s.nics() {
		for _, cidr := range nic.IPv4Addresses {
			if ip, _, err := net.ParseCIDR(cidr); err == nil {
				return ip.String()
			}
		}
	}
	return ""
}
