package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/memory"
)

// redfishFlags are the flags of `redfish serve`.
type redfishFlags struct {
	listen    string
	htpasswd  string
	noAuth    bool
	tlsCert   string
	tlsKey    string
	imageDir  string
	portFile  string
	backend   string
	verbosity int

	memorySystems string
	memoryCount   int
	libvirtRun    string
	memoryPrefix  string
}

// redfishBackend makes the Backend named by --backend from the flags, and
// returns what releases it (connections, handles) at shutdown.
type redfishBackend func(ctx context.Context, f *redfishFlags) (redfish.Backend, func() error, error)

// redfishBackends are the backends `--backend` can name. A backend with
// flags of its own registers them in (*redfishFlags).register.
var redfishBackends = map[string]redfishBackend{
	"memory":  newMemoryBackend,
	"libvirt": newLibvirtBackend,
}

func (f *redfishFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", redfish.DefaultAddr, "listen address; must be loopback (127.0.0.0/8, ::1 or localhost)")
	fl.StringVar(&f.htpasswd, "htpasswd", "", "htpasswd file of bcrypt hashes (htpasswd -B) whose users may log in")
	fl.BoolVar(&f.noAuth, "no-auth", false, "serve without authentication (instead of --htpasswd)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key, serve HTTPS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS private key (PEM)")
	fl.StringVar(&f.imageDir, "image-dir", "", "where InsertMedia downloads images (default: a temporary directory removed at exit)")
	fl.StringVar(&f.portFile, "port-file", "", "write the bound port to this file (mode 0600) once listening; removed at exit")
	fl.StringVar(&f.backend, "backend", "memory", "where systems live: "+strings.Join(backendNames(), ", "))
	fl.IntVarP(&f.verbosity, "v", "v", 0, "log verbosity (1 logs every request)")
	fl.StringVar(&f.memorySystems, "memory-systems", "", "memory backend: JSON file with an array of {name, uuid, cpus, memoryGiB, macs, bootMode, powerState, arch, cpuModel, disks: [{sizeGiB, ssd}]}")
	fl.IntVar(&f.memoryCount, "memory-count", 0, "memory backend: also generate this many systems")
	fl.StringVar(&f.libvirtRun, "libvirt-run", "", "libvirt backend: serve the domains of this lab run (qemu:///system)")
	fl.StringVar(&f.memoryPrefix, "memory-prefix", "node", "memory backend: name prefix of generated systems (<prefix>-0, <prefix>-1, ...)")
}

func backendNames() []string {
	names := make([]string, 0, len(redfishBackends))
	for n := range redfishBackends {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func newRedfishCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "redfish",
		Short: "Redfish BMC emulator for the lab's systems",
	}
	cmd.AddCommand(newRedfishServeCommand())
	return cmd
}

func newRedfishServeCommand() *cobra.Command {
	f := &redfishFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the Redfish BMC emulator until SIGINT/SIGTERM",
		Long: `Serve a Redfish BMC for every system of a backend on one loopback port, as
Ironic and sushy expect it (sessions or HTTP Basic, virtual media, boot
override, power). The lab supervises this process; --port-file tells it the
port the kernel picked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			logger := newStderrLogger(cmd.ErrOrStderr(), f.verbosity)
			return serveRedfish(ctx, f, cmd.OutOrStdout(), logger)
		},
	}
	f.register(cmd)
	return cmd
}

// serveRedfish runs the emulator until ctx ends or the server fails.
func serveRedfish(ctx context.Context, f *redfishFlags, out io.Writer, logger logr.Logger) (retErr error) {
	if f.htpasswd == "" && !f.noAuth {
		return errors.New("--htpasswd is required (or --no-auth to serve without authentication)")
	}
	factory, ok := redfishBackends[f.backend]
	if !ok {
		return fmt.Errorf("unknown --backend %q; known: %s", f.backend, strings.Join(backendNames(), ", "))
	}
	backend, closeBackend, err := factory(ctx, f)
	if err != nil {
		return fmt.Errorf("set up %s backend: %w", f.backend, err)
	}
	defer func() {
		if err := closeBackend(); err != nil && retErr == nil {
			retErr = fmt.Errorf("close %s backend: %w", f.backend, err)
		}
	}()
	srv, err := redfish.New(redfish.Options{
		Backend: backend, Addr: f.listen, HtpasswdPath: f.htpasswd,
		TLSCertFile: f.tlsCert, TLSKeyFile: f.tlsKey, ImageDir: f.imageDir, Logger: logger,
	})
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	return runUntilDone(ctx, srv, f.portFile, out)
}

// runUntilDone publishes the port, waits for ctx or a server failure, and
// shuts the server down.
func runUntilDone(ctx context.Context, srv *redfish.Server, portFile string, out io.Writer) error {
	stopErr := func() error {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	}
	if portFile != "" {
		if err := writePortFile(portFile, srv.Addr().Port); err != nil {
			return errors.Join(err, stopErr())
		}
		defer os.Remove(portFile)
	}
	fmt.Fprintf(out, "Serving Redfish at %s/redfish/v1/\n", srv.URL())
	select {
	case <-ctx.Done():
	case <-srv.Done():
		return errors.Join(srv.Err(), stopErr())
	}
	return stopErr()
}

// writePortFile writes the port through a temporary file, so a supervisor
// polling for it never reads half a number.
func writePortFile(path string, port int) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".port-*")
	if err != nil {
		return fmt.Errorf("write port file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(strconv.Itoa(port) + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("write port file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write port file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write port file: %w", err)
	}
	return nil
}

// newMemoryBackend serves the systems of --memory-systems followed by
// --memory-count generated ones.
func newMemoryBackend(_ context.Context, f *redfishFlags) (redfish.Backend, func() error, error) {
	var specs []memory.SystemSpec
	if f.memorySystems != "" {
		loaded, err := memory.LoadSpecs(f.memorySystems)
		if err != nil {
			return nil, nil, err
		}
		specs = loaded
	}
	if f.memoryCount < 0 {
		return nil, nil, fmt.Errorf("--memory-count %d is negative", f.memoryCount)
	}
	specs = append(specs, memory.Generate(f.memoryPrefix, f.memoryCount)...)
	if len(specs) == 0 {
		return nil, nil, errors.New("no systems: pass --memory-systems and/or --memory-count")
	}
	b, err := memory.New(memory.Options{Systems: specs})
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// newStderrLogger logs JSON lines, which the lab keeps in the component's
// log file.
func newStderrLogger(w io.Writer, verbosity int) logr.Logger {
	var mu sync.Mutex
	return funcr.NewJSON(func(obj string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, obj)
	}, funcr.Options{Verbosity: verbosity, LogTimestamp: true})
}
