package metal3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/stmcginnis/gofish/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRebootRequested(t *testing.T) {
	for _, c := range []struct {
		annotations map[string]string
		force       bool
		want        bool
		mode        bmov1alpha1.RebootMode
	}{
		{nil, false, false, bmov1alpha1.RebootModeSoft},
		{map[string]string{"reboot.metal3.io": ""}, false, true, bmov1alpha1.RebootModeSoft},
		{map[string]string{"reboot.metal3.io/a": `{"mode":"hard"}`}, false, true, bmov1alpha1.RebootModeHard},
		{map[string]string{"reboot.metal3.io/a": `{"mode":"soft"}`, "reboot.metal3.io/b": `{"mode":"hard"}`}, false, true, bmov1alpha1.RebootModeHard},
		{map[string]string{"reboot.metal3.io/a": "not json"}, false, true, bmov1alpha1.RebootModeSoft},
		{map[string]string{"reboot.metal3.iox": ""}, false, false, bmov1alpha1.RebootModeSoft},
		{map[string]string{"reboot.metal3.io": ""}, true, false, bmov1alpha1.RebootModeSoft},
		{map[string]string{"reboot.metal3.io/r": `{"force":true}`}, true, true, bmov1alpha1.RebootModeSoft},
	} {
		h := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Annotations: c.annotations}}
		got, mode := rebootRequested(h, c.force)
		if got != c.want || mode != c.mode {
			t.Errorf("%v (force %v): %v %s, want %v %s", c.annotations, c.force, got, mode, c.want, c.mode)
		}
	}
}

func TestCheckInitiateDelete(t *testing.T) {
	now := metav1.Now()
	const delay = `{"deleteAction":"delay"}`
	for _, c := range []struct {
		state    bmov1alpha1.ProvisioningState
		op       bmov1alpha1.OperationalStatus
		detached string // the detached annotation's value
		errType  bmov1alpha1.ErrorType
		errCount int
		changed  bool
		next     bmov1alpha1.ProvisioningState
	}{
		{bmov1alpha1.StateRegistering, "", "", "", 0, true, bmov1alpha1.StateDeleting},
		{bmov1alpha1.StateAvailable, "", "", "", 0, true, bmov1alpha1.StatePoweringOffBeforeDelete},
		{bmov1alpha1.StateInspecting, "", "", "", 0, true, bmov1alpha1.StatePoweringOffBeforeDelete},
		{bmov1alpha1.StateProvisioned, bmov1alpha1.OperationalStatusOK, "", "", 0, true, bmov1alpha1.StateDeprovisioning},
		{bmov1alpha1.StateProvisioned, bmov1alpha1.OperationalStatusDetached, "x", "", 0, true, bmov1alpha1.StateDeleting},
		{bmov1alpha1.StateProvisioned, bmov1alpha1.OperationalStatusDetached, delay, "", 0, false, bmov1alpha1.StateProvisioned},
		{bmov1alpha1.StateDeprovisioning, "", "", "", 0, false, bmov1alpha1.StateDeprovisioning},
		{bmov1alpha1.StateDeprovisioning, "", "", bmov1alpha1.RegistrationError, 4, true, bmov1alpha1.StateDeleting},
		{bmov1alpha1.StatePoweringOffBeforeDelete, "", "", bmov1alpha1.RegistrationError, 2, false, bmov1alpha1.StatePoweringOffBeforeDelete},
		{bmov1alpha1.StateDeleting, "", "", "", 0, false, bmov1alpha1.StateDeleting},
	} {
		h := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
		if c.detached != "" {
			h.Annotations = map[string]string{bmov1alpha1.DetachedAnnotation: c.detached}
		}
		h.Status.Provisioning.State, h.Status.OperationalStatus = c.state, c.op
		h.Status.ErrorType, h.Status.ErrorCount = c.errType, c.errCount
		s := newScope(h, logr.Discard())
		if changed := s.checkInitiateDelete(); changed != c.changed || s.next != c.next {
			t.Errorf("%s/%s/%q/%s x%d: changed %v next %s, want %v %s", c.state, c.op, c.detached, c.errType, c.errCount, changed, s.next, c.changed, c.next)
		}
	}
	live := newScope(&bmov1alpha1.BareMetalHost{}, logr.Discard())
	if live.checkInitiateDelete() {
		t.Error("a host that is not deleted was moved towards deletion")
	}
}

func TestBackoff(t *testing.T) {
	r := &hostReconciler{opts: Options{ErrorBackoff: time.Second, MaxErrorBackoff: 10 * time.Second}}
	for _, c := range []struct {
		count int
		max   time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second}, {5, 10 * time.Second}, {60, 10 * time.Second}} {
		for range 20 {
			if d := r.backoff(c.count); d < c.max/2 || d > c.max {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", c.count, d, c.max/2, c.max)
			}
		}
	}
}

func TestDescribeBMCError(t *testing.T) {
	unauthorized := common.ConstructError(401, []byte(`{"error":{"code":"Base.1.16.NoValidSession","message":"bad","@Message.ExtendedInfo":[{"Message":"Wrong user or password."}]}}`))
	for _, c := range []struct {
		err  error
		want string
	}{
		{unauthorized, "the BMC rejected the credentials (HTTP 401 Unauthorized): Wrong user or password."},
		{common.ConstructError(503, []byte("busy")), "the BMC answered HTTP 503 Service Unavailable: busy"},
		{&url.Error{Op: "Get", URL: "http://x", Err: errors.New("connection refused")}, "cannot reach the BMC: connection refused"},
		{errors.New("other"), "other"},
	} {
		if got := describeBMCError(c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
	if err := bmcError("read system x", unauthorized); !strings.HasPrefix(err.Error(), "read system x: the BMC rejected") || !errors.Is(err, unauthorized) {
		t.Errorf("bmcError: %v", err)
	}
}

func TestMediaServer(t *testing.T) {
	m, err := newMediaServer(logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	srvDone := make(chan error, 1)
	ctx, cancel := contextWithCancel()
	go func() { srvDone <- m.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-srvDone; err != nil {
			t.Error(err)
		}
	}()
	file := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(file, []byte("config drive"), 0o600); err != nil {
		t.Fatal(err)
	}
	u1, err := m.publish("host-a", file)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, u1); code != http.StatusOK || body != "config drive" {
		t.Fatalf("GET %s: %d %q", u1, code, body)
	}
	u2, _ := m.publish("host-a", file)
	if code, _ := get(t, u1); code != http.StatusNotFound || u1 == u2 {
		t.Fatalf("a replaced drive is still served (%d)", code)
	}
	m.release("host-a")
	for _, u := range []string{u2, m.url() + "/configdrive/nothing.iso", m.url() + "/etc/passwd"} {
		if code, _ := get(t, u); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", u, code)
		}
	}
	resp, err := http.Post(m.url()+configDrivePath+"x.iso", "text/plain", strings.NewReader("x")) //nolint:noctx // test
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
	if !strings.HasPrefix(m.url(), "http://127.0.0.1:") {
		t.Errorf("config drives served at %s, want loopback", m.url())
	}
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u) //nolint:noctx,gosec // test, loopback
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// FuzzRebootArguments: whatever a reboot annotation holds, reading it does
// not panic and gives a mode.
func FuzzRebootArguments(f *testing.F) {
	for _, s := range []string{"", `{"mode":"hard"}`, `{"force":1}`, "[]", "null", `{"mode":"hard","force":true}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		args := rebootArguments(in)
		if args.Mode == "" && in == "" {
			t.Fatal("empty value must mean soft")
		}
	})
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}
