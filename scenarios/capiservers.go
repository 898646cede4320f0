package scenarios

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	"golang.org/x/crypto/ssh"
	"k8s.io/utils/ptr"

	"github.com/paritylab/paritylab/lab/agentbin"
	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/providers/controlplane/release/releasetest"
)

// releaseRepository is where the CAPI flow's release image is pushed.
const releaseRepository = "ocp/release"

// CAPIServers are the loopback services a CAPI flow's cluster needs that
// a real site has elsewhere: a registry with the release image the
// control-plane provider reads, and the image server that the
// Metal3MachineTemplates point hosts at.
type CAPIServers struct {
	registry *releasetest.Registry
	images   *httptest.Server
	// ReleaseRepository is <registry host>/<repository> of the release.
	ReleaseRepository string
	// Image is the discovery image as a Metal3MachineTemplate names it.
	Image capm3v1beta2.Image
}

// StartCAPIServers pushes the release of an OpenShift version (with the
// Kubernetes version the lab's kubelets run) and serves the lab's generic
// discovery image, which reads its InfraEnv from the config drive built
// from the bootstrap data. Close stops both.
func StartCAPIServers(ctx context.Context, version string) (*CAPIServers, error) {
	s := &CAPIServers{registry: releasetest.Start()}
	if _, err := s.registry.Push(releaseRepository, version, strings.TrimPrefix(binaries.KubernetesVersion, "v")); err != nil {
		s.Close()
		return nil, fmt.Errorf("push release %s: %w", version, err)
	}
	s.ReleaseRepository = s.registry.Host() + "/" + releaseRepository
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

// Close stops the servers; it is safe on a partly started value.
func (s *CAPIServers) Close() {
	if s.images != nil {
		s.images.Close()
	}
	if s.registry != nil {
		s.registry.Close()
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
