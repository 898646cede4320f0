package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxOperationsBody bounds the answer FetchOperations reads: a full log of
// 10000 operations is under 1 MiB.
const maxOperationsBody = 16 << 20

// FetchOperationsInput says whose operation log FetchOperations reads.
type FetchOperationsInput struct {
	// Client sends the request. Default http.DefaultClient; pass one that
	// trusts the emulator's CA when it speaks HTTPS.
	Client *http.Client
	// URL is the emulator's base URL, scheme://host:port (see
	// ParseBMCAddress).
	URL string
	// SystemID is the system's ID (its UUID) or name.
	SystemID string
	// Username and Password are sent with HTTP Basic auth when Username
	// is set.
	Username string
	Password string
	// Since, when set, keeps only operations at or after it.
	Since time.Time
}

// ResponseError is an answer of the emulator other than success, with
// what its Redfish error body says.
type ResponseError struct {
	StatusCode int
	// Code is the Redfish message ID, e.g. Base.1.16.ResourceNotFound;
	// empty when the body was not a Redfish error.
	Code    string
	Message string
}

func (e *ResponseError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.StatusCode, e.Code, e.Message)
}

// FetchOperations reads the operation log of one system from an emulator
// over HTTP, oldest first. An answer other than 200 is a *ResponseError.
func FetchOperations(ctx context.Context, in FetchOperationsInput) ([]Operation, error) {
	ops, err := fetchOperations(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("fetch operations of system %s: %w", in.SystemID, err)
	}
	return ops, nil
}

func fetchOperations(ctx context.Context, in FetchOperationsInput) ([]Operation, error) {
	target, err := operationsURL(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("make request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in.Username != "" {
		req.SetBasicAuth(in.Username, in.Password)
	}
	client := in.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return decodeOperations(resp)
}

// operationsURL builds the admin URL of a system's log.
func operationsURL(in FetchOperationsInput) (string, error) {
	u, err := adminURL(in.URL, in.SystemID, "operations")
	if err != nil {
		return "", err
	}
	if !in.Since.IsZero() {
		u += "?" + url.Values{sinceParam: {in.Since.UTC().Format(time.RFC3339Nano)}}.Encode()
	}
	return u, nil
}

// adminURL builds the admin URL of a system's resource (operations,
// faults). The base URL must not carry a path or credentials:
// credentials go in the input, where they never end up in an error
// message.
func adminURL(baseURL, system, leaf string) (string, error) {
	if system == "" {
		return "", errors.New("no system ID")
	}
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil {
		// Not echoed: an unparsable URL cannot be redacted.
		return "", errors.New("emulator URL is not a URL; want scheme://host:port")
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return "", fmt.Errorf("emulator URL %q is not scheme://host:port with scheme http or https", base.Redacted())
	}
	if base.User != nil || base.Path != "" || base.RawQuery != "" {
		return "", fmt.Errorf("emulator URL %s must be scheme://host:port only, without credentials, path or query", base.Redacted())
	}
	return base.Scheme + "://" + base.Host + adminPath + "/" + url.PathEscape(system) + "/" + leaf, nil
}

func decodeOperations(resp *http.Response) ([]Operation, error) {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxOperationsBody+1))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if len(raw) > maxOperationsBody {
		return nil, fmt.Errorf("answer exceeds %d bytes", maxOperationsBody)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, responseError(resp.StatusCode, raw)
	}
	var body operationsBody
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	if body.Operations == nil {
		return nil, errors.New(`answer has no "operations" list`)
	}
	return body.Operations, nil
}

// responseError reads a Redfish error body, or keeps the start of
// whatever else came back (a proxy's page, say).
func responseError(status int, raw []byte) *ResponseError {
	var body errorBody
	if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
		return &ResponseError{StatusCode: status, Code: body.Error.Code, Message: body.Error.Message}
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &ResponseError{StatusCode: status, Message: msg}
}
