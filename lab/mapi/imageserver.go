package mapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/ports"
)

// nodeImageName is the path the node image is served at.
const nodeImageName = "/node.iso"

// imageServer serves the node image on loopback, the lab's stand-in for
// the image cache OpenShift's bare-metal hosts download RHCOS from.
type imageServer struct {
	path     string
	checksum string
	ln       net.Listener
	srv      *http.Server
}

func newImageServer(opts Options) (*imageServer, error) {
	path := opts.NodeImage
	if path == "" {
		var err error
		if path, err = assisted.NodeImage(opts.Images, opts.Agent); err != nil {
			return nil, fmt.Errorf("build the node image: %w", err)
		}
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ports.Loopback, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for the node image server: %w", err)
	}
	s := &imageServer{path: path, checksum: sum, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+nodeImageName, func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, path) })
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Start serves until ctx ends (a manager Runnable).
func (s *imageServer) Start(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("node image server: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stop node image server: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *imageServer) url() string { return "http://" + s.ln.Addr().String() + nodeImageName }

// close releases the port of a server that never started.
func (s *imageServer) close() error { return s.ln.Close() }

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open node image: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum node image: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
