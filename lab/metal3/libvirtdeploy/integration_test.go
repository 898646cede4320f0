package libvirtdeploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirt"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/metal3"
	"github.com/paritylab/paritylab/lab/redfish"
	rflibvirt "github.com/paritylab/paritylab/lab/redfish/libvirt"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

const (
	testRun     = "pl-tdeploy"
	bmcUser     = "admin"
	bmcPassword = "s3cret-bmc"
	diskMarker  = images.MarkerPrefix + " libvirtdeploy-disk"
	userData    = "PARITYLAB-USERDATA hello-from-the-config-drive"
)

// diskImageInit is the init of the "disk image": it prints a marker, then
// mounts the CD the way a first-boot agent finds its config-2 drive and
// prints the user data.
var diskImageInit = `#!/bin/sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "` + diskMarker + ` uuid=$(cat /sys/class/dmi/id/product_uuid 2>/dev/null)" > /dev/ttyS0
` + images.LoadModules + `
for i in $(seq 1 150); do [ -b /dev/sr0 ] && break; sleep 0.2; done
mkdir -p /mnt/cd
if mount -t iso9660 -o ro /dev/sr0 /mnt/cd; then
  echo "config drive: $(cat /mnt/cd/openstack/latest/user_data)" > /dev/ttyS0
else
  echo "config drive: none" > /dev/ttyS0
fi
while :; do sleep 3600; done
`

// lab is a real TCG host behind the Redfish emulator (libvirt backend),
// with the metal3 Operator using this package's Deployer against a real
// API server.
type lab struct {
	conn   *libvirt.Connect
	host   *machines.Host
	bmc    *redfish.Server
	client client.Client
}

func newLab(t *testing.T) *lab {
	t.Helper()
	ctx := context.Background()
	ctrllog.SetLogger(logr.New(ctrllog.NullLogSink{}))
	d, err := libvirtd.Ensure(ctx, libvirtd.Options{LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop() })
	conn, err := d.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	m, err := machines.New(machines.Options{Conn: conn, RunID: testRun, SerialLogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	h, err := m.Define(machines.HostSpec{Name: "host-0", MemoryMiB: 512})
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{conn: conn, host: h}
	l.bmc = startBMC(t, conn, m)
	l.client = startOperator(t, conn)
	return l
}

func startBMC(t *testing.T, conn *libvirt.Connect, m *machines.Manager) *redfish.Server {
	t.Helper()
	backend, err := rflibvirt.New(rflibvirt.Options{Conn: conn, RunID: testRun})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	srv, err := redfish.New(redfish.Options{
		Backend:      backend,
		HtpasswdPath: redfishtest.WriteHtpasswd(t, map[string]string{bmcUser: bmcPassword}),
		ImageDir:     filepath.Join(m.DataDir(), "media"), // where QEMU can read
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

func startOperator(t *testing.T, conn *libvirt.Connect) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "deploy", Dir: filepath.Join(t.TempDir(), "cp")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	deployer, err := New(Options{Conn: conn, RunID: testRun})
	if err != nil {
		t.Fatal(err)
	}
	op, err := metal3.New(metal3.Options{Deployer: deployer, PollInterval: 2 * time.Second, ErrorBackoff: 200 * time.Millisecond, MaxErrorBackoff: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	host, err := controllers.Start(ctx, controllers.Options{RESTConfig: cp.RESTConfig(), WebhookHost: "127.0.0.1",
		CertDir: filepath.Join(t.TempDir(), "certs"), Components: []controllers.Component{op}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Stop(context.Background()) })
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: host.Manager().GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// diskImage builds the bootable image to deploy and serves it on loopback.
func diskImage(t *testing.T) (url, sha string) {
	t.Helper()
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	iso, err := store.ISO(images.ISOSpec{
		Label:     "PARITYLAB_DEPLOYTEST",
		Initramfs: images.InitramfsSpec{Init: diskImageInit, Modules: []string{"ahci", "sr_mod", "isofs"}},
		Cmdline:   "console=ttyS0 quiet",
	})
	if err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	return redfishtest.ServeImage(t, "node.raw", content), hex.EncodeToString(sum[:])
}

// The Operator provisions a real host with a disk image through this
// Deployer: the domain boots the image from its disk, with the user data
// on the config-2 drive in its CD. Deleting the host deprovisions it:
// powered off, CD empty, the start of its disk wiped.
func TestProvisionsDiskImageThatTheDomainBoots(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	url, sum := diskImage(t)
	key := l.createHost(t, url, sum)

	waitFor(t, 5*time.Minute, "the host provisioned", func() bool {
		h := &bmov1alpha1.BareMetalHost{}
		return l.client.Get(ctx, key, h) == nil && h.Status.Provisioning.State == bmov1alpha1.StateProvisioned
	})
	for _, want := range []string{diskMarker + " uuid=" + l.host.UUID, "config drive: " + userData} {
		waitFor(t, 4*time.Minute, "serial line "+want, func() bool { return logHas(l.host.SerialLog, want) })
	}
	if raw, err := os.ReadFile(l.host.SerialLog); err == nil {
		t.Logf("serial console of %s:\n%s", l.host.Domain, raw)
	}
	h := &bmov1alpha1.BareMetalHost{}
	if err := l.client.Get(ctx, key, h); err != nil {
		t.Fatal(err)
	}
	if hw := h.Status.HardwareDetails; hw == nil || len(hw.NIC) == 0 || hw.NIC[0].MAC != l.host.Spec.MAC {
		t.Fatalf("inspected hardware %+v: want the domain's NIC %s", hw, l.host.Spec.MAC)
	}

	if err := l.client.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the host deleted", func() bool {
		return apierrors.IsNotFound(l.client.Get(ctx, key, &bmov1alpha1.BareMetalHost{}))
	})
	if on, err := machines.IsOn(l.conn, l.host.UUID); err != nil || on {
		t.Fatalf("domain on=%v (%v) after the host was deleted, want off", on, err)
	}
	checkDiskStartZero(t, l.host.Disk, DefaultWipeBytes)
}

func (l *lab) createHost(t *testing.T, url, sum string) client.ObjectKey {
	t.Helper()
	ctx := context.Background()
	ns := "hosts"
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "host-0-bmc", Namespace: ns},
			StringData: map[string]string{"username": bmcUser, "password": bmcPassword}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "host-0-user-data", Namespace: ns},
			StringData: map[string]string{"userData": userData}},
		&bmov1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Name: "host-0", Namespace: ns},
			Spec: bmov1alpha1.BareMetalHostSpec{
				BMC: bmov1alpha1.BMCDetails{
					Address:         "redfish-virtualmedia+" + l.bmc.URL() + "/redfish/v1/Systems/" + l.host.UUID,
					CredentialsName: "host-0-bmc",
				},
				BootMACAddress: l.host.Spec.MAC,
				BootMode:       bmov1alpha1.Legacy, // the domain has BIOS firmware
				Online:         true,
				Image:          &bmov1alpha1.Image{URL: url, Checksum: sum, ChecksumType: bmov1alpha1.SHA256, DiskFormat: ptr.To("raw")},
				UserData:       &corev1.SecretReference{Name: "host-0-user-data"},
			},
		},
	} {
		if err := l.client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return client.ObjectKey{Namespace: ns, Name: "host-0"}
}

// checkDiskStartZero reads the start of a qcow2 disk.
func checkDiskStartZero(t *testing.T, disk string, n int64) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "start.raw")
	cmd := exec.Command("qemu-img", "dd", "-f", "qcow2", "-O", "raw", "if="+disk, "of="+out, "bs=1M", "count="+strconv.FormatInt(n>>20, 10))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("read disk start: %v %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != n || !bytes.Equal(b, make([]byte, n)) {
		t.Fatalf("the first %d bytes of the disk are not all zero after metadata cleaning", n)
	}
}

func logHas(path, want string) bool {
	raw, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(raw), want)
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}
