package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/paritylab/paritylab/lab/state"
)

// Status is what `paritylab lab status` shows.
type Status struct {
	StateDir   string
	RunID      string
	Profile    string
	Created    time.Time
	Ready      bool
	OwnerAlive bool
	Owner      string
	HubServer  string
	Kubeconfig string
	LogDir     string
	// HubHealth is "ok" when the hub API server answers /readyz, else why not.
	HubHealth string
	Resources []state.Resource
	// Accel says how hosts run and why.
	Accel string
	// BMC is the Redfish emulator's URL.
	BMC string
	// Registry is the release registry's host:port.
	Registry string
	// Hosts, with the power state their BMC reports.
	Hosts []HostStatus
}

// HostStatus is one host as `lab status` shows it.
type HostStatus struct {
	InventoryHost
	// Power is the BMC's PowerState, or why it could not be read.
	Power string
}

// ReadStatus reads the ledger of the lab in stateDir and probes its hub.
func ReadStatus(ctx context.Context, stateDir string) (*Status, error) {
	ledger, err := state.Open(ledgerPath(stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoLab
	}
	if err != nil {
		return nil, err
	}
	rec := ledger.Record()
	st := &Status{
		StateDir:   stateDir,
		RunID:      rec.RunID,
		Profile:    rec.Values[valueProfile],
		Created:    rec.Created,
		Ready:      rec.Values[valueReady] != "",
		HubServer:  rec.Values[valueServer],
		Kubeconfig: rec.Values[valueKubeconfig],
		LogDir:     rec.Values[valueLogDir],
		Resources:  rec.Resources,
	}
	if owner, err := decodeIdentity(rec.Values[valueOwner]); err == nil {
		st.Owner, st.OwnerAlive = owner.String(), owner.Alive()
	}
	st.HubHealth = probeHub(ctx, st.Kubeconfig)
	st.Accel, st.BMC, st.Registry = rec.Values[valueAccel], rec.Values[valueBMC], rec.Values[valueRegistry]
	hosts, err := hostStatuses(ctx, stateDir)
	if err != nil {
		return nil, err
	}
	st.Hosts = hosts
	return st, nil
}

func probeHub(ctx context.Context, kubeconfig string) string {
	if kubeconfig == "" {
		return "not started"
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Sprintf("unreadable kubeconfig: %v", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
	if err != nil {
		return err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Sprintf("not answering: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("%s: %s", resp.Status, body)
	}
	return "ok"
}
