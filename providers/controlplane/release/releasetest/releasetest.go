package releasetest

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// Registry is an in-memory registry on 127.0.0.1 (plain HTTP, which
// go-containerregistry uses for loopback registries).
type Registry struct {
	server *httptest.Server
	// requests counts requests, to tell whether a registry was asked.
	requests atomic.Int64
	// down makes every request fail with 503.
	down atomic.Bool
}

// Start starts an empty registry.
func Start() *Registry {
	r := &Registry{}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if r.down.Load() {
			http.Error(w, "registry down", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, req)
	}))
	return r
}

// Host is the registry's host:port.
func (r *Registry) Host() string { return strings.TrimPrefix(r.server.URL, "http://") }

// Requests is how many requests the registry got.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// SetDown makes the registry fail every request (true) or serve again.
func (r *Registry) SetDown(down bool) { r.down.Store(down) }

// Close stops the registry.
func (r *Registry) Close() { r.server.Close() }

// Push pushes a release image for an OpenShift and a Kubernetes version
// (e.g. "4.17.3", "1.30.5") to <host>/<repository>:<version>-x86_64 and
// returns the image by digest.
func (r *Registry) Push(repository, version, kubernetes string) (string, error) {
	img, err := Image(version, kubernetes)
	if err != nil {
		return "", err
	}
	tag := release.Image(r.Host()+"/"+repository, version, "x86_64")
	ref, err := name.ParseReference(tag)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", tag, err)
	}
	if err := remote.Write(ref, img); err != nil {
		return "", fmt.Errorf("push %s: %w", tag, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Digest(digest.String()).String(), nil
}

// Image builds a release image: one layer with image-references.
func Image(version, kubernetes string) (v1.Image, error) {
	refs, err := ImageReferences(version, kubernetes)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: release.ImageReferencesPath, Mode: 0o644, Size: int64(len(refs)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(refs); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer := static.NewLayer(buf.Bytes(), types.DockerLayer)
	return mutate.AppendLayers(empty.Image, layer)
}

// ImageReferences renders an image-references file as a release's.
func ImageReferences(version, kubernetes string) ([]byte, error) {
	tag := func(n, versions string) map[string]any {
		return map[string]any{
			"name":        n,
			"annotations": map[string]string{"io.openshift.build.versions": versions},
			"from":        map[string]string{"kind": "DockerImage", "name": "quay.example/ocp@sha256:" + strings.Repeat("0", 64)},
		}
	}
	return json.Marshal(map[string]any{
		"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
		"metadata": map[string]any{"name": version},
		"spec": map[string]any{"tags": []any{
			tag("cli", "kubectl="+kubernetes),
			tag("hyperkube", "kubernetes="+kubernetes+",kubernetes-tests="+kubernetes),
		}},
	})
}
