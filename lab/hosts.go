package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/logs"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/redfish"
	redfishlibvirt "github.com/paritylab/paritylab/lab/redfish/libvirt"
)

func init() {
	// `lab down` in any process can remove lab domains and pools.
	machines.RegisterReapers()
}

// hostsLayer is what the host steps bring up.
type hostsLayer struct {
	daemon  *libvirtd.Daemon
	conn    *libvirt.Connect
	accel   machines.ProbeResult
	manager *machines.Manager
	backend *redfishlibvirt.Backend
	bmc     *redfish.Server
	creds   bmcCredentials
	hosts   []*machines.Host
}

// hostSteps are the steps of Up that make hosts; none without hosts.
func (l *Lab) hostSteps() []step {
	if l.opts.Hosts == 0 {
		return nil
	}
	return []step{
		{name: "Starting libvirt (libvirtd, virtlogd) unless it runs", do: l.startLibvirt, undo: l.stopLibvirt},
		{name: "Choosing KVM or TCG", do: l.chooseAccel},
		{name: fmt.Sprintf("Defining %d hosts (libvirt domains)", l.opts.Hosts), do: l.defineHosts, undo: l.removeHosts},
		{name: "Starting the Redfish BMC emulator", do: l.startBMC, undo: l.stopBMC},
		{name: fmt.Sprintf("Registering %d BareMetalHosts", l.opts.Hosts), do: l.registerHosts},
	}
}

func (l *Lab) startLibvirt(ctx context.Context) error {
	d, err := libvirtd.Ensure(ctx, libvirtd.Options{LogDir: l.opts.LogDir, Tracker: l.ledger, Logger: l.opts.Logger})
	if err != nil {
		return err
	}
	l.hostsLayer.daemon = d
	conn, err := d.Connect()
	if err != nil {
		return err
	}
	l.hostsLayer.conn = conn
	return nil
}

func (l *Lab) stopLibvirt(context.Context) error {
	h := &l.hostsLayer
	var errs []error
	if h.conn != nil {
		if _, err := h.conn.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if h.daemon != nil {
		errs = append(errs, h.daemon.Stop())
	}
	return errors.Join(errs...)
}

func (l *Lab) chooseAccel(ctx context.Context) error {
	h := &l.hostsLayer
	if l.opts.Accel != "" {
		h.accel = machines.ProbeResult{Accel: machines.Accel(l.opts.Accel), Reason: "chosen by the user"}
		return nil
	}
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		return err
	}
	cache, err := images.CacheDir()
	if err != nil {
		return err
	}
	res, err := machines.ProbeAccel(ctx, machines.ProbeInput{
		Conn: h.conn, Images: store, RunID: l.runID, Tracker: l.ledger,
		WorkDir:   filepath.Join(machines.DataRoot, l.runID+"-accel-probe"),
		CacheFile: filepath.Join(cache, "accel.json"),
	})
	if err != nil {
		return err
	}
	h.accel = res
	l.opts.Logger.Info("Acceleration chosen", "accel", res.Accel, "reason", res.Reason)
	return l.ledger.SetValue(valueAccel, string(res.Accel)+" ("+res.Reason+")")
}

func (l *Lab) defineHosts(context.Context) error {
	h := &l.hostsLayer
	owner, err := process.IdentityOf("paritylab", os.Getpid())
	if err != nil {
		return err
	}
	m, err := machines.New(machines.Options{
		Conn: h.conn, RunID: l.runID, SerialLogDir: filepath.Join(l.opts.LogDir, "serial"),
		Accel: h.accel.Accel, Tracker: l.ledger, Logger: l.opts.Logger.WithName("machines"),
		Owner: machines.Metadata{OwnerPID: owner.PID, OwnerStartTicks: owner.StartTicks, StateDir: l.opts.StateDir},
	})
	if err != nil {
		return err
	}
	h.manager = m
	for i := range l.opts.Hosts {
		spec := l.opts.Host
		if size, ok := l.opts.HostSizes[i]; ok {
			spec = size
		}
		spec.Name = "host-" + strconv.Itoa(i)
		host, err := m.Define(spec)
		if err != nil {
			return err
		}
		h.hosts = append(h.hosts, host)
	}
	return nil
}

func (l *Lab) removeHosts(ctx context.Context) error {
	if l.hostsLayer.manager == nil {
		return nil
	}
	return l.hostsLayer.manager.Close(ctx)
}

func (l *Lab) startBMC(context.Context) error {
	h := &l.hostsLayer
	backend, err := redfishlibvirt.New(redfishlibvirt.Options{Conn: h.conn, RunID: l.runID, Logger: l.opts.Logger.WithName("bmc")})
	if err != nil {
		return err
	}
	h.backend = backend
	creds, err := newBMCCredentials(l.opts.StateDir)
	if err != nil {
		return err
	}
	h.creds = creds
	logger, f, err := logs.File(filepath.Join(l.opts.LogDir, "bmc.log"), 1)
	if err != nil {
		return err
	}
	l.closeOnStop = append(l.closeOnStop, f)
	srv, err := redfish.New(redfish.Options{
		Backend: backend, HtpasswdPath: creds.htpasswd, Logger: logger,
		// Downloaded media must be where QEMU can read it.
		ImageDir: filepath.Join(h.manager.DataDir(), "media"),
	})
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	h.bmc = srv
	return l.ledger.SetValue(valueBMC, srv.URL())
}

func (l *Lab) stopBMC(ctx context.Context) error {
	h := &l.hostsLayer
	var errs []error
	if h.bmc != nil {
		errs = append(errs, h.bmc.Shutdown(ctx))
	}
	if h.backend != nil {
		errs = append(errs, h.backend.Close())
	}
	return errors.Join(errs...)
}

// bmcCredentials are the emulator's login, kept 0600 in the state dir and
// in the BMC Secrets, never in logs.
type bmcCredentials struct {
	user, password string
	htpasswd       string
}

func newBMCCredentials(stateDir string) (bmcCredentials, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return bmcCredentials{}, fmt.Errorf("generate BMC password: %w", err)
	}
	c := bmcCredentials{user: "admin", password: hex.EncodeToString(raw), htpasswd: filepath.Join(stateDir, "bmc.htpasswd")}
	line, err := redfish.HtpasswdLine(c.user, c.password)
	if err != nil {
		return bmcCredentials{}, err
	}
	if err := os.WriteFile(c.htpasswd, []byte(line), 0o600); err != nil {
		return bmcCredentials{}, fmt.Errorf("write BMC htpasswd: %w", err)
	}
	if err := os.WriteFile(filepath.Join(stateDir, "bmc.credentials"), []byte(c.user+":"+c.password+"\n"), 0o600); err != nil {
		return bmcCredentials{}, fmt.Errorf("write BMC credentials: %w", err)
	}
	return c, nil
}
