package metal3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/paritylab/paritylab/lab/ports"
)

// configDrivePath is where config drives are served.
const configDrivePath = "/configdrive/"

// mediaServer serves each host's config drive to BMCs from a loopback
// port, under a random name that changes with every provisioning and is
// gone once the host is deprovisioned.
type mediaServer struct {
	listener net.Listener
	log      logr.Logger

	mu      sync.Mutex
	files   map[string]string    // token -> file
	byHost  map[types.UID]string // host -> token
	started bool
}

var _ manager.Runnable = (*mediaServer)(nil)

func newMediaServer(log logr.Logger) (*mediaServer, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ports.Loopback, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for config drives: %w", err)
	}
	return &mediaServer{listener: l, log: log, files: map[string]string{}, byHost: map[types.UID]string{}}, nil
}

// url is the server's base URL.
func (m *mediaServer) url() string { return "http://" + m.listener.Addr().String() }

// publish serves file as the host's config drive, in place of any earlier
// one, and returns its URL.
func (m *mediaServer) publish(host types.UID, file string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("name a config drive: %w", err)
	}
	token := hex.EncodeToString(b[:])
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, m.byHost[host])
	m.files[token], m.byHost[host] = file, token
	return m.url() + configDrivePath + token + ".iso", nil
}

// release stops serving the host's config drive.
func (m *mediaServer) release(host types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, m.byHost[host])
	delete(m.byHost, host)
}

func (m *mediaServer) lookup(token string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[token]
	return f, ok
}

// ServeHTTP answers GET and HEAD of a published config drive.
func (m *mediaServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "config drives are read with GET", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == deployRamdiskPath {
		http.Error(w, "the lab's deploy ramdisk works on hosts from outside (metal3.Options.Deployer): there is no image to boot", http.StatusNotFound)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, configDrivePath)
	token, isISO := strings.CutSuffix(name, ".iso")
	file, found := m.lookup(token)
	if !ok || !isISO || !found {
		http.NotFound(w, r)
		return
	}
	f, err := os.Open(file)
	if err != nil {
		m.log.Error(err, "Cannot serve config drive", "file", file)
		http.Error(w, "config drive unavailable", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		http.Error(w, "config drive unavailable", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, path.Base(r.URL.Path), info.ModTime(), f)
}

// Start serves until ctx ends (a manager Runnable). A server serves one
// manager's lifetime.
func (m *mediaServer) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("config drive server already served a manager")
	}
	m.started = true
	m.mu.Unlock()
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	m.log.V(1).Info("Serving config drives", "url", m.url())
	if err := srv.Serve(m.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve config drives: %w", err)
	}
	return nil
}

// NeedLeaderElection is false: any replica may be asked for a drive.
func (m *mediaServer) NeedLeaderElection() bool { return false }

// close releases the port of a server that never started.
func (m *mediaServer) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return nil
	}
	return m.listener.Close()
}
