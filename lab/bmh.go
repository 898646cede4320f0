package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paritylab/paritylab/lab/machines"
)

// Labels on every object the lab makes for its hosts.
const (
	LabelRun  = "paritylab.io/run"
	LabelHost = "paritylab.io/host"
)

// Inventory is what a run's hosts are, written to <state>/inventory.json
// for `lab status`, scenarios and people.
type Inventory struct {
	// BMC is the Redfish emulator's base URL.
	BMC string `json:"bmc"`
	// CredentialsFile holds "user:password" of the BMC (0600).
	CredentialsFile string `json:"credentialsFile"`
	// Namespace of the BareMetalHosts and their Secrets on the hub.
	Namespace string `json:"namespace"`
	// Accel is how the hosts run.
	Accel string          `json:"accel"`
	Hosts []InventoryHost `json:"hosts"`
}

// InventoryHost is one host.
type InventoryHost struct {
	Name       string `json:"name"`
	Domain     string `json:"domain"`
	UUID       string `json:"uuid"`
	MAC        string `json:"mac"`
	Firmware   string `json:"firmware"`
	BMCAddress string `json:"bmcAddress"`
	// CredentialsSecret is the name of the BMC Secret next to the
	// BareMetalHost.
	CredentialsSecret string `json:"credentialsSecret"`
	SerialLog         string `json:"serialLog"`
}

func inventoryPath(stateDir string) string { return filepath.Join(stateDir, "inventory.json") }

// bmcAddress is how metal3 addresses a host behind a Redfish BMC that
// boots it from virtual media.
func bmcAddress(bmc string, h *machines.Host) string {
	return "redfish-virtualmedia+" + bmc + "/redfish/v1/Systems/" + h.UUID
}

func (l *Lab) registerHosts(ctx context.Context) error {
	h := &l.hostsLayer
	inv := Inventory{BMC: h.bmc.URL(), CredentialsFile: filepath.Join(l.opts.StateDir, "bmc.credentials"),
		Namespace: l.opts.HostsNamespace, Accel: string(h.accel.Accel)}
	if err := l.ensureNamespace(ctx, inv.Namespace); err != nil {
		return err
	}
	for _, host := range h.hosts {
		ih := InventoryHost{
			Name: host.Spec.Name, Domain: host.Domain, UUID: host.UUID, MAC: host.Spec.MAC,
			Firmware: string(host.Spec.Firmware), BMCAddress: bmcAddress(inv.BMC, host),
			CredentialsSecret: host.Spec.Name + "-bmc-secret", SerialLog: host.SerialLog,
		}
		if err := l.createHostObjects(ctx, inv.Namespace, ih); err != nil {
			return err
		}
		inv.Hosts = append(inv.Hosts, ih)
	}
	raw, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		return fmt.Errorf("encode inventory: %w", err)
	}
	if err := os.WriteFile(inventoryPath(l.opts.StateDir), raw, 0o600); err != nil {
		return fmt.Errorf("write inventory: %w", err)
	}
	l.inventory = &inv
	return nil
}

func (l *Lab) ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := l.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// createHostObjects writes the host's BMC Secret and its BareMetalHost,
// powered off and unprovisioned, as a metal3 user would.
func (l *Lab) createHostObjects(ctx context.Context, ns string, h InventoryHost) error {
	labels := map[string]string{LabelRun: l.runID, LabelHost: h.Name}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: h.CredentialsSecret, Namespace: ns, Labels: labels},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{"username": l.hostsLayer.creds.user, "password": l.hostsLayer.creds.password},
	}
	if err := l.client.Create(ctx, secret); err != nil {
		return fmt.Errorf("create BMC secret of %s: %w", h.Name, err)
	}
	mode := bmov1alpha1.Legacy
	if h.Firmware == string(machines.FirmwareUEFI) {
		mode = bmov1alpha1.UEFI
	}
	bmh := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: ns, Labels: labels},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BMC:            bmov1alpha1.BMCDetails{Address: h.BMCAddress, CredentialsName: h.CredentialsSecret},
			BootMACAddress: h.MAC,
			BootMode:       mode,
			Online:         false,
			Description:    "paritylab host " + h.Domain,
		},
	}
	if err := l.client.Create(ctx, bmh); err != nil {
		return fmt.Errorf("create BareMetalHost %s: %w", h.Name, err)
	}
	return nil
}

// ReadInventory loads the inventory of the run kept in stateDir; a run
// without hosts has none (nil, nil).
func ReadInventory(stateDir string) (*Inventory, error) {
	raw, err := os.ReadFile(inventoryPath(stateDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read inventory: %w", err)
	}
	var inv Inventory
	if err := json.Unmarshal(raw, &inv); err != nil {
		return nil, fmt.Errorf("parse inventory: %w", err)
	}
	return &inv, nil
}

// ReadBMCCredentials reads the "user:password" file of an inventory's BMC
// (Inventory.CredentialsFile).
func ReadBMCCredentials(path string) (user, password string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("read BMC credentials: %w", err)
	}
	user, password, ok := strings.Cut(strings.TrimSpace(string(raw)), ":")
	if !ok {
		return "", "", fmt.Errorf("BMC credentials file %s is malformed", path)
	}
	return user, password, nil
}
