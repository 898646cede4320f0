package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/imagepull"
)

// writeMirrorConfig writes the mirror registry configuration the discovery
// ignition carries where ignition writes it, before any pull: the
// registries.conf the host's pulls follow and the registry CA.
func (s *system) writeMirrorConfig(cfg agentapi.DiscoveryConfig) error {
	if cfg.RegistriesConf == "" {
		return nil
	}
	for path, content := range map[string]string{agentapi.RegistriesConfPath: cfg.RegistriesConf, agentapi.RegistryCAPath: cfg.RegistryCA} {
		full := s.path(path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

// pullImages pulls what the installer pulls on the host before it writes
// the disk, through the host's registries.conf; the first image that no
// source serves fails the install.
func (d *discovery) pullImages(ctx context.Context, images []string) error {
	for _, image := range images {
		res, err := imagepull.Pull(ctx, imagepull.Input{Image: image, RegistriesConf: d.sys.path(agentapi.RegistriesConfPath),
			UserAgent: "paritylab-agent/" + d.hostID, Dial: d.dialRegistry})
		if err != nil {
			return err
		}
		log.Printf("pulled %s from %s (%d blobs)", image, res.Source, res.Blobs)
	}
	return nil
}

// dialRegistry reaches a registry named on the host's 127.0.0.1 (the
// lab's registries, as the hub's mirror configuration names them) at the
// service host: user-mode networking takes a guest's connections to its
// gateway to the host's 127.0.0.1. Any other address is dialled as it
// is; the guest's own 127.0.0.0/8 never leaves it, so a registry on
// another host loopback address (the disconnected site's source) is out
// of the guest's reach.
func (d *discovery) dialRegistry(ctx context.Context, network, address string) (net.Conn, error) {
	return dialLabHost(ctx, d.serviceHost, network, address)
}

// dialLabHost dials an address, one on the host's 127.0.0.1 (a lab
// service, as the hub names it) at serviceHost, where the guest reaches
// it. An empty serviceHost dials every address as it is.
func dialLabHost(ctx context.Context, serviceHost, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if serviceHost != "" && (host == "127.0.0.1" || host == "localhost") {
		address = net.JoinHostPort(serviceHost, port)
	}
	var dialer net.Dialer
	return dialer.DialContext(ctx, network, address)
}
