package libvirtdeploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/go-logr/logr"
	"libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/metal3"
)

// Defaults of Options.
const (
	DefaultMaxImageBytes = 16 << 30
	DefaultWipeBytes     = 4 << 20
)

// Options configure a Deployer. Conn and RunID are required.
type Options struct {
	// Conn is the libvirt connection (lab/libvirtd).
	Conn *libvirt.Connect
	// RunID is the lab run whose domains the Deployer may write to.
	RunID string
	// TempDir receives downloads and conversions while they run. Default
	// os.TempDir().
	TempDir string
	// MaxImageBytes bounds one download. Default 16 GiB.
	MaxImageBytes int64
	// WipeBytes is how much of a disk's start WipeDisk zeroes (partition
	// tables, boot sectors, file-system signatures). Default 4 MiB.
	WipeBytes int64
	// HTTPClient downloads images and checksum files; its redirects are
	// checked to stay on loopback. Default: a client that connects to
	// loopback addresses only.
	HTTPClient *http.Client
	// Logger receives what is written where, at V(1). Default discard.
	Logger logr.Logger
}

// Deployer writes to the disks of one lab run's domains.
type Deployer struct {
	opts Options
}

var _ metal3.Deployer = (*Deployer)(nil)

// New checks the options.
func New(opts Options) (*Deployer, error) {
	switch {
	case opts.Conn == nil:
		return nil, errors.New("libvirtdeploy: Conn is required")
	case opts.RunID == "":
		return nil, errors.New("libvirtdeploy: RunID is required")
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.MaxImageBytes <= 0 {
		opts.MaxImageBytes = DefaultMaxImageBytes
	}
	if opts.WipeBytes <= 0 {
		opts.WipeBytes = DefaultWipeBytes
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = loopbackClient()
	}
	opts.HTTPClient = withRedirectCheck(opts.HTTPClient)
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	return &Deployer{opts: opts}, nil
}

// WriteImage downloads the image, verifies it, and writes it as raw to the
// domain's disk.
func (d *Deployer) WriteImage(ctx context.Context, host metal3.Host, image metal3.Image) error {
	h, err := d.host(host.SystemID)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(d.opts.TempDir, "paritylab-deploy-")
	if err != nil {
		return fmt.Errorf("create download dir: %w", err)
	}
	defer os.RemoveAll(dir)
	file, err := d.fetchImage(ctx, image, dir)
	if err != nil {
		return err
	}
	raw, err := toRaw(ctx, file, image.Format, dir)
	if err != nil {
		return err
	}
	if err := machines.WriteImage(d.opts.Conn, h, raw); err != nil {
		return err
	}
	d.opts.Logger.V(1).Info("Image written", "host", host.Name, "domain", h.Spec.Name, "image", image.URL)
	return nil
}

func (d *Deployer) fetchImage(ctx context.Context, image metal3.Image, dir string) (string, error) {
	want, err := d.expectedChecksum(ctx, image)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "image")
	if err := d.download(ctx, image.URL, file, d.opts.MaxImageBytes); err != nil {
		return "", err
	}
	if err := verify(file, want); err != nil {
		return "", fmt.Errorf("image %s: %w", image.URL, err)
	}
	return file, nil
}

// WipeDisk zeroes the start of the domain's disk.
func (d *Deployer) WipeDisk(_ context.Context, host metal3.Host) error {
	h, err := d.host(host.SystemID)
	if err != nil {
		return err
	}
	zeros, err := os.CreateTemp(d.opts.TempDir, "paritylab-wipe-*.raw")
	if err != nil {
		return fmt.Errorf("create wipe image: %w", err)
	}
	defer os.Remove(zeros.Name())
	if _, err := io.Copy(zeros, io.LimitReader(zeroReader{}, d.opts.WipeBytes)); err != nil {
		zeros.Close()
		return fmt.Errorf("write wipe image: %w", err)
	}
	if err := zeros.Close(); err != nil {
		return fmt.Errorf("write wipe image: %w", err)
	}
	if err := machines.WriteImage(d.opts.Conn, h, zeros.Name()); err != nil {
		return err
	}
	d.opts.Logger.V(1).Info("Disk metadata wiped", "host", host.Name, "domain", h.Spec.Name, "bytes", d.opts.WipeBytes)
	return nil
}

// host finds the run's domain with this UUID and its disk.
func (d *Deployer) host(uuid string) (*machines.Host, error) {
	if uuid == "" {
		return nil, errors.New("no system ID to find the domain by")
	}
	def, err := machines.Definition(d.opts.Conn, uuid)
	if err != nil {
		return nil, err
	}
	meta, ok := machines.ParseMetadata(def)
	if !ok || meta.RunID != d.opts.RunID {
		return nil, fmt.Errorf("domain %s (%s) is not a host of lab run %s: not writing to its disk", def.Name, uuid, d.opts.RunID)
	}
	for _, disk := range def.Devices.Disks {
		if disk.Device == "disk" && disk.Source != nil && disk.Source.File != nil && disk.Source.File.File != "" {
			return &machines.Host{Spec: machines.HostSpec{Name: def.Name}, Domain: def.Name, UUID: uuid, Disk: disk.Source.File.File}, nil
		}
	}
	return nil, fmt.Errorf("domain %s has no file-backed disk", def.Name)
}

// qcow2Magic starts every qcow2 image.
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// toRaw returns a raw image: the file itself, or its conversion from
// qcow2. An empty format is detected.
func toRaw(ctx context.Context, file, format, dir string) (string, error) {
	if format == "" {
		format = "raw"
		if head, err := readHead(file, len(qcow2Magic)); err == nil && bytes.Equal(head, qcow2Magic) {
			format = "qcow2"
		}
	}
	switch format {
	case "raw":
		return file, nil
	case "qcow2":
		raw := filepath.Join(dir, "image.raw")
		out, err := exec.CommandContext(ctx, "qemu-img", "convert", "-f", "qcow2", "-O", "raw", file, raw).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("convert qcow2 image to raw: qemu-img: %w: %s", err, bytes.TrimSpace(out))
		}
		return raw, nil
	}
	return "", fmt.Errorf("image format %q is not supported: use raw or qcow2", format)
}

func readHead(file string, n int) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	_, err = io.ReadFull(f, b)
	return b, err
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
