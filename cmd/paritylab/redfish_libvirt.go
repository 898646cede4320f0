package main

import (
	"context"
	"errors"

	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/redfish"
	redfishlibvirt "github.com/paritylab/paritylab/lab/redfish/libvirt"
)

// newLibvirtBackend serves the domains of one lab run from the system
// libvirt daemon (which must run: the lab that made the domains runs it).
func newLibvirtBackend(_ context.Context, f *redfishFlags) (redfish.Backend, func() error, error) {
	if f.libvirtRun == "" {
		return nil, nil, errors.New("--libvirt-run is required: the run ID of the lab whose hosts to serve (see `paritylab lab status`)")
	}
	conn, err := libvirtd.Connect()
	if err != nil {
		return nil, nil, err
	}
	b, err := redfishlibvirt.New(redfishlibvirt.Options{Conn: conn, RunID: f.libvirtRun})
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return b, func() error {
		_, cerr := conn.Close()
		return errors.Join(b.Close(), cerr)
	}, nil
}
