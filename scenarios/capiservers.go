package scenarios

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	"golang.org/x/crypto/ssh"
	"k8s.io/utils/ptr"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/agentbin"
	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/releases"
)

// CAPIServers are the loopback services a CAPI flow's cluster needs that
// a real site has elsewhere: the release the control-plane provider reads,
// in the lab's registry, and the image server that the
// Metal3MachineTemplates point hosts at.
type CAPIServers struct {
	images *httptest.Server
	// ReleaseRepository is <registry host>/<repository> of the release.
	ReleaseRepository string
	// Image is the discovery image as a Metal3MachineTemplate names it.
	Image capm3v1beta2.Image
}

// CAPIServersInput is the lab registry and the version to install.
type CAPIServersInput struct {
	// ReleaseRepository is the lab registry's release repository and
	// Releases the releases it holds.
	ReleaseRepository string
	Releases          []releases.Pushed
	// Version is the OpenShift version the flow installs. A version the
	// registry lacks is pushed into it, with the Kubernetes version the
	// lab's kubelets run.
	Version string
}

// StartCAPIServers makes sure the lab registry has the release of the
// version and serves the lab's generic discovery image, which reads its
// InfraEnv from the config drive built from the bootstrap data. Close
// stops the image server.
func StartCAPIServers(ctx context.Context, in CAPIServersInput) (*CAPIServers, error) {
	if in.ReleaseRepository == "" {
		return nil, errors.New("CAPI servers: the lab has no release registry")
	}
	if _, err := lab.FindRelease(in.Releases, in.Version); err != nil {
		rel := releases.Release{Version: in.Version, Kubernetes: strings.TrimPrefix(binaries.KubernetesVersion, "v")}
		if _, err := releases.Push(ctx, releases.PushInput{Repository: in.ReleaseRepository, Releases: []releases.Release{rel}}); err != nil {
			return nil, err
		}
	}
	s := &CAPIServers{ReleaseRepository: in.ReleaseRepository}
	path, sum, err := discoveryImage(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	const name = "/discovery.img"
	s.images = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != name {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, path)
	}))
	s.Image = capm3v1beta2.Image{URL: s.images.URL + name, Checksum: ptr.To(sum), ChecksumType: "sha256", DiskFormat: "raw"}
	return s, nil
}

// discoveryImage builds (or finds cached) the generic discovery image and
// returns its path and sha256.
func discoveryImage(ctx context.Context) (path, sum string, err error) {
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		return "", "", fmt.Errorf("open image store: %w", err)
	}
	cache, err := images.CacheDir()
	if err != nil {
		return "", "", err
	}
	agent, err := agentbin.Path(ctx, cache)
	if err != nil {
		return "", "", fmt.Errorf("build lab-agent: %w", err)
	}
	if path, err = assisted.GenericDiscoveryImage(store, agent); err != nil {
		return "", "", fmt.Errorf("build discovery image: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", fmt.Errorf("hash %s: %w", path, err)
	}
	return path, hex.EncodeToString(h.Sum(nil)), nil
}

// Close stops the image server; it is safe on a partly started value.
// The release stays in the lab registry, which goes with the lab.
func (s *CAPIServers) Close() {
	if s.images != nil {
		s.images.Close()
	}
}

// NewSSHKey returns a fresh public key in authorized_keys form, whose
// private half is thrown away: both flows write the same one.
func NewSSHKey() (string, error) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	key, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))), nil
}
