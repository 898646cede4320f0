package lab

import (
	"context"
	"errors"
	"sync"

	"github.com/paritylab/paritylab/lab/metal3"
	"github.com/paritylab/paritylab/lab/metal3/libvirtdeploy"
)

// lazyDeployer writes the run's hosts' disks through libvirt once the host
// steps have connected to it: the hub's controllers start before them.
type lazyDeployer struct {
	l    *Lab
	once sync.Once
	d    metal3.Deployer
	err  error
}

var _ metal3.Deployer = (*lazyDeployer)(nil)

func (z *lazyDeployer) get() (metal3.Deployer, error) {
	z.once.Do(func() {
		conn := z.l.hostsLayer.conn
		if conn == nil {
			z.err = errors.New("this lab has no hosts: nothing to write disk images to")
			return
		}
		z.d, z.err = libvirtdeploy.New(libvirtdeploy.Options{Conn: conn, RunID: z.l.runID})
	})
	return z.d, z.err
}

func (z *lazyDeployer) WriteImage(ctx context.Context, h metal3.Host, img metal3.Image) error {
	d, err := z.get()
	if err != nil {
		return err
	}
	return d.WriteImage(ctx, h, img)
}

func (z *lazyDeployer) WipeDisk(ctx context.Context, h metal3.Host) error {
	d, err := z.get()
	if err != nil {
		return err
	}
	return d.WipeDisk(ctx, h)
}
