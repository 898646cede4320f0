package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// hostStatuses asks the BMC, as any Redfish client would, for each host's
// power state.
func hostStatuses(ctx context.Context, stateDir string) ([]HostStatus, error) {
	inv, err := ReadInventory(stateDir)
	if err != nil || inv == nil {
		return nil, err
	}
	user, password, err := ReadBMCCredentials(inv.CredentialsFile)
	if err != nil {
		return nil, err
	}
	out := make([]HostStatus, 0, len(inv.Hosts))
	for _, h := range inv.Hosts {
		power, err := powerState(ctx, inv.BMC+"/redfish/v1/Systems/"+h.UUID, user, password)
		if err != nil {
			power = "? (" + err.Error() + ")"
		}
		out = append(out, HostStatus{InventoryHost: h, Power: power})
	}
	return out, nil
}

func powerState(ctx context.Context, url, user, password string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(user, password)
	req.Header.Set("OData-Version", "4.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", errors.New("BMC not answering")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("BMC answered %s", resp.Status)
	}
	var sys struct{ PowerState string }
	if err := json.Unmarshal(body, &sys); err != nil {
		return "", fmt.Errorf("BMC answer: %w", err)
	}
	return sys.PowerState, nil
}
