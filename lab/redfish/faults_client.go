package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// AdminInput says which emulator and system an admin request is for.
type AdminInput struct {
	// Client sends the request. Default http.DefaultClient.
	Client *http.Client
	// URL is the emulator's base URL, scheme://host:port.
	URL string
	// SystemID is the system's ID (its UUID) or name.
	SystemID string
	// Username and Password are sent with HTTP Basic auth when Username
	// is set.
	Username string
	Password string
}

// PutFault sets a fault on a system of an emulator over HTTP, as SetFault
// does in process. An answer other than 200 is a *ResponseError.
func PutFault(ctx context.Context, in AdminInput, f Fault) error {
	body, err := json.Marshal(toFaultJSON(f))
	if err != nil {
		return fmt.Errorf("encode fault: %w", err)
	}
	if err := adminRequest(ctx, in, http.MethodPut, body, http.StatusOK); err != nil {
		return fmt.Errorf("set fault of system %s: %w", in.SystemID, err)
	}
	return nil
}

// DeleteFault clears the fault of a system of an emulator over HTTP.
func DeleteFault(ctx context.Context, in AdminInput) error {
	if err := adminRequest(ctx, in, http.MethodDelete, nil, http.StatusNoContent); err != nil {
		return fmt.Errorf("clear fault of system %s: %w", in.SystemID, err)
	}
	return nil
}

func adminRequest(ctx context.Context, in AdminInput, method string, body []byte, want int) error {
	target, err := adminURL(in.URL, in.SystemID, "faults")
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("make request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if in.Username != "" {
		req.SetBasicAuth(in.Username, in.Password)
	}
	client := in.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode != want {
		return responseError(resp.StatusCode, raw)
	}
	return nil
}
