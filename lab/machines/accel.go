package machines

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/state"
)

// ProbeInput configures ProbeAccel.
type ProbeInput struct {
	// Conn is the libvirt connection.
	Conn *libvirt.Connect
	// Images builds the probe's marker image.
	Images *images.Store
	// RunID names the probe domain.
	RunID string
	// WorkDir holds the probe's kernel, initramfs and serial log; QEMU
	// must be able to read it. Removed afterwards.
	WorkDir string
	// CacheFile remembers the outcome per host kernel and QEMU version, so
	// only the first run on a machine pays for the probe. Empty: no cache.
	CacheFile string
	// Timeout of the KVM boot. Default 20s.
	Timeout time.Duration
	// Tracker records the probe domain while it exists.
	Tracker state.Tracker
}

// ProbeResult says how guests will run and why.
type ProbeResult struct {
	Accel  Accel  `json:"accel"`
	Reason string `json:"reason"`
	// BootSeconds is how long the KVM probe took to print its marker.
	BootSeconds float64 `json:"bootSeconds,omitempty"`
	Key         string  `json:"key"`
	ProbedAt    string  `json:"probedAt"`
}

// ProbeAccel decides between KVM and TCG: KVM only when /dev/kvm exists and
// a KVM guest boots to its marker within the timeout (on some machines
// /dev/kvm exists but guests hang).
func ProbeAccel(ctx context.Context, in ProbeInput) (ProbeResult, error) {
	if in.Timeout == 0 {
		in.Timeout = 20 * time.Second
	}
	if in.Tracker == nil {
		in.Tracker = state.Discard
	}
	if _, err := os.Stat("/dev/kvm"); err != nil {
		return ProbeResult{Accel: AccelTCG, Reason: "no /dev/kvm"}, nil
	}
	key := probeKey()
	if cached, ok := readProbeCache(in.CacheFile, key); ok {
		cached.Reason = "cached: " + cached.Reason
		return cached, nil
	}
	res, err := probeKVM(ctx, in)
	if err != nil {
		return ProbeResult{}, err
	}
	res.Key, res.ProbedAt = key, time.Now().UTC().Format(time.RFC3339)
	writeProbeCache(in.CacheFile, res)
	return res, nil
}

func probeKVM(ctx context.Context, in ProbeInput) (ProbeResult, error) {
	marker := images.MarkerSpec{Marker: "accel-probe", PowerOff: true}
	initrd, err := in.Images.Initramfs(marker.Initramfs())
	if err != nil {
		return ProbeResult{}, err
	}
	def, err := probeDomain(in, initrd)
	if err != nil {
		return ProbeResult{}, err
	}
	defer os.RemoveAll(in.WorkDir)
	start := time.Now()
	uuid, err := startProbe(in, def)
	if uuid != "" {
		defer func() {
			if removeDomain(in.Conn, uuid) == nil {
				_ = in.Tracker.Forget(domainResource(uuid, def.Name))
			}
		}()
	}
	if err != nil {
		return ProbeResult{Accel: AccelTCG, Reason: "KVM guest did not start: " + err.Error()}, nil
	}
	if waitForLine(ctx, serialPath(def), marker.Line(), in.Timeout) {
		took := time.Since(start).Seconds()
		return ProbeResult{Accel: AccelKVM, Reason: fmt.Sprintf("KVM guest booted in %.1fs", took), BootSeconds: took}, nil
	}
	return ProbeResult{Accel: AccelTCG, Reason: fmt.Sprintf("KVM guest printed nothing within %s", in.Timeout)}, nil
}

// probeDomain is a direct-kernel-boot KVM domain with the marker initramfs.
func probeDomain(in ProbeInput, initrd string) (*libvirtxml.Domain, error) {
	if err := os.MkdirAll(in.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("create probe dir: %w", err)
	}
	kernel := filepath.Join(in.WorkDir, "vmlinuz")
	initramfs := filepath.Join(in.WorkDir, "initrd")
	for src, dst := range map[string]string{in.Images.Kernel().Vmlinuz: kernel, initrd: initramfs} {
		raw, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("read probe image: %w", err)
		}
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			return nil, fmt.Errorf("write probe image: %w", err)
		}
	}
	def, err := NewDomain(DomainSpec{
		Name: in.RunID + "-accel-probe", Accel: AccelKVM, VCPUs: 1, MemoryMiB: 256,
		Firmware: FirmwareBIOS, SerialLog: filepath.Join(in.WorkDir, "serial.log"),
		MAC: MACFor("accel-probe"), Serial: "accel-probe", Metadata: Metadata{RunID: in.RunID, Host: "accel-probe"},
	})
	if err != nil {
		return nil, err
	}
	def.Devices.Disks = nil // no disk, no CD: the kernel is loaded directly
	def.OS.Kernel, def.OS.Initrd, def.OS.Cmdline = kernel, initramfs, "console=ttyS0 quiet"
	SetBootOrder(def)
	return def, nil
}

func serialPath(def *libvirtxml.Domain) string {
	return def.Devices.Serials[0].Source.File.Path
}

func startProbe(in ProbeInput, def *libvirtxml.Domain) (string, error) {
	raw, err := def.Marshal()
	if err != nil {
		return "", fmt.Errorf("encode probe domain: %w", err)
	}
	dom, err := in.Conn.DomainDefineXML(raw)
	if err != nil {
		return "", err
	}
	defer dom.Free()
	uuid, err := dom.GetUUIDString()
	if err != nil {
		return "", err
	}
	if err := in.Tracker.Track(domainResource(uuid, def.Name)); err != nil {
		return uuid, err
	}
	return uuid, dom.Create()
}

// waitForLine polls a file until it holds a line containing want.
func waitForLine(ctx context.Context, path, want string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if raw, err := os.ReadFile(path); err == nil && bytes.Contains(raw, []byte(want)) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
}

// probeKey changes when what decides KVM's fate changes: the host kernel or
// the QEMU build.
func probeKey() string {
	var uts syscall.Utsname
	_ = syscall.Uname(&uts)
	release := utsString(uts.Release[:])
	qemu, _ := exec.Command("qemu-system-x86_64", "--version").Output()
	first, _, _ := strings.Cut(string(qemu), "\n")
	sum := sha256.Sum256([]byte(release + "\n" + first))
	return hex.EncodeToString(sum[:8])
}

func utsString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

func readProbeCache(path, key string) (ProbeResult, bool) {
	if path == "" {
		return ProbeResult{}, false
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return ProbeResult{}, false
	}
	var res ProbeResult
	if json.Unmarshal(raw, &res) != nil || res.Key != key || (res.Accel != AccelKVM && res.Accel != AccelTCG) {
		return ProbeResult{}, false
	}
	return res, true
}

func writeProbeCache(path string, res ProbeResult) {
	if path == "" {
		return
	}
	raw, _ := json.MarshalIndent(res, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		_ = os.WriteFile(path, raw, 0o644)
	}
}
