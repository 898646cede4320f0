package release

import (
	"archive/tar"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ImageReferencesPath is the file of a release image listing its
// component images, with their build versions.
const ImageReferencesPath = "release-manifests/image-references"

// Image names the release image of an OpenShift version:
// <repository>:<version>-<architecture>.
func Image(repository, version, architecture string) string {
	switch architecture {
	case "", "amd64":
		architecture = "x86_64"
	case "arm64":
		architecture = "aarch64"
	}
	return fmt.Sprintf("%s:%s-%s", repository, version, architecture)
}

// Info is what a release image says about itself.
type Info struct {
	// Image is the release image by digest, in the repository it was asked
	// for (not the mirror it was read from): what a cluster pulls through
	// its own mirror configuration.
	Image string
	// Version is the OpenShift version the release names.
	Version string
	// KubernetesVersion is the Kubernetes version it ships, with a v
	// prefix, e.g. v1.30.5.
	KubernetesVersion string
	// Components are the payload's images by name (image-references'
	// tags), as the release names them: in its source repositories.
	Components map[string]string
}

// Resolver reads release images.
type Resolver interface {
	// Resolve reads image (by tag or digest) through regs; pullSecret,
	// when not empty, is a .dockerconfigjson with registry credentials.
	Resolve(ctx context.Context, image string, regs *Registries, pullSecret []byte) (Info, error)
}

// Remote reads release images from registries, caching what it read.
type Remote struct {
	// Timeout bounds one resolution. Default 30s.
	Timeout time.Duration
	// CacheFor is how long a resolution is reused. Default 10m.
	CacheFor time.Duration
	// Dial opens the connections to registries. Default: the network's.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	info Info
	at   time.Time
}

var _ Resolver = (*Remote)(nil)

// Resolve implements Resolver: it tries the image's sources in order and
// returns the first answer.
func (r *Remote) Resolve(ctx context.Context, image string, regs *Registries, pullSecret []byte) (Info, error) {
	key := cacheKey(image, regs, pullSecret)
	if info, ok := r.lookup(key); ok {
		return info, nil
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ref, err := name.ParseReference(image)
	if err != nil {
		return Info{}, fmt.Errorf("parse release image %q: %w", image, err)
	}
	transport, err := transportFor(regs, r.Dial)
	if err != nil {
		return Info{}, err
	}
	_, byDigest := ref.(name.Digest)
	sources := regs.sources(ref.Context().Name(), byDigest)
	if len(sources) == 0 {
		return Info{}, fmt.Errorf("read release image %s: its registry is blocked and no mirror serves pulls by %s", image, map[bool]string{true: "digest", false: "tag"}[byDigest])
	}
	var errs []error
	for _, src := range sources {
		info, err := resolveFrom(ctx, ref, src, transport, pullSecret)
		if err == nil {
			r.store(key, info)
			return info, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", src.repository, err))
	}
	return Info{}, fmt.Errorf("read release image %s: %w", image, errors.Join(errs...))
}

func (r *Remote) lookup(key string) (Info, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cache[key]
	ttl := r.CacheFor
	if ttl == 0 {
		ttl = 10 * time.Minute
	}
	if !ok || time.Since(c.at) > ttl {
		return Info{}, false
	}
	return c.info, true
}

func (r *Remote) store(key string, info Info) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil {
		r.cache = map[string]cached{}
	}
	r.cache[key] = cached{info: info, at: time.Now()}
}

func cacheKey(image string, regs *Registries, pullSecret []byte) string {
	raw, _ := json.Marshal(regs)
	return image + "\x00" + string(raw) + "\x00" + string(pullSecret)
}

// resolveFrom reads the release from one source repository.
func resolveFrom(ctx context.Context, ref name.Reference, src source, transport http.RoundTripper, pullSecret []byte) (Info, error) {
	var opts []name.Option
	if src.insecure {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(src.repository, opts...)
	if err != nil {
		return Info{}, fmt.Errorf("parse repository: %w", err)
	}
	var at name.Reference
	switch r := ref.(type) {
	case name.Digest:
		at = repo.Digest(r.DigestStr())
	case name.Tag:
		at = repo.Tag(r.TagStr())
	}
	auth := authFor(repo.RegistryStr(), pullSecret)
	desc, err := remote.Get(at, remote.WithContext(ctx), remote.WithTransport(transport), remote.WithAuth(auth))
	if err != nil {
		return Info{}, err
	}
	img, err := desc.Image()
	if err != nil {
		return Info{}, fmt.Errorf("read image: %w", err)
	}
	refs, err := readFile(mutate.Extract(img), ImageReferencesPath)
	if err != nil {
		return Info{}, err
	}
	info, err := parseImageReferences(refs)
	if err != nil {
		return Info{}, err
	}
	info.Image = ref.Context().Digest(desc.Digest.String()).String()
	return info, nil
}

func transportFor(regs *Registries, dial func(ctx context.Context, network, address string) (net.Conn, error)) (http.RoundTripper, error) {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	if dial != nil {
		t.DialContext = dial
	}
	if regs == nil || len(regs.CABundle) == 0 {
		return t, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(regs.CABundle) {
		return nil, errors.New("the registry CA bundle holds no PEM certificate")
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}

// authFor picks the registry's credentials from a .dockerconfigjson.
func authFor(registry string, pullSecret []byte) authn.Authenticator {
	var cfg struct {
		Auths map[string]authn.AuthConfig `json:"auths"`
	}
	if len(pullSecret) == 0 || json.Unmarshal(pullSecret, &cfg) != nil {
		return authn.Anonymous
	}
	for host, a := range cfg.Auths {
		h := strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://")
		if strings.TrimSuffix(h, "/") == registry {
			return authn.FromConfig(a)
		}
	}
	return authn.Anonymous
}

// readFile returns one file of a flattened image file system.
func readFile(rc io.ReadCloser, path string) ([]byte, error) {
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the image has no %s: is it an OpenShift release image?", path)
		}
		if err != nil {
			return nil, fmt.Errorf("read image layers: %w", err)
		}
		if strings.TrimPrefix(h.Name, "/") == path || strings.TrimPrefix(h.Name, "./") == path {
			return io.ReadAll(io.LimitReader(tr, 16<<20))
		}
	}
}

var kubeVersion = regexp.MustCompile(`(?:^|,)kubernetes=v?([0-9]+\.[0-9]+\.[0-9]+[^,]*)`)

// parseImageReferences reads the release version (the image stream's name),
// the Kubernetes version (the io.openshift.build.versions annotation of
// its tags, hyperkube's first) and the component images.
func parseImageReferences(raw []byte) (Info, error) {
	var is struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Tags []struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
				From        struct {
					Name string `json:"name"`
				} `json:"from"`
			} `json:"tags"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &is); err != nil {
		return Info{}, fmt.Errorf("decode %s: %w", ImageReferencesPath, err)
	}
	info := Info{Version: is.Metadata.Name, Components: map[string]string{}}
	var first string
	for _, t := range is.Spec.Tags {
		if t.From.Name != "" {
			info.Components[t.Name] = t.From.Name
		}
		m := kubeVersion.FindStringSubmatch(t.Annotations["io.openshift.build.versions"])
		switch {
		case m == nil:
		case t.Name == "hyperkube":
			info.KubernetesVersion = "v" + m[1]
		case first == "":
			first = "v" + m[1]
		}
	}
	if info.KubernetesVersion == "" {
		info.KubernetesVersion = first
	}
	if info.KubernetesVersion == "" {
		return Info{}, fmt.Errorf("%s names no kubernetes version (io.openshift.build.versions)", ImageReferencesPath)
	}
	return info, nil
}
