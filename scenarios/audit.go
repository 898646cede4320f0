package scenarios

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/controlplane"
)

// RefusedRestoresInput selects the writes to one Node that carried a
// label back and that its workload cluster's API server refused.
type RefusedRestoresInput struct {
	Lab     *framework.Lab
	Cluster *Cluster
	// Node names the Node.
	Node string
	// Label is the label key the restoring writes carry.
	Label string
	// Since drops the writes before it.
	Since time.Time
}

// RefusedRestores returns each refused restoring write, oldest first, as
// "<verb> by <program>: <code> <status text>" (update by
// machine-controller-manager: 409 Conflict), from the workload cluster's
// audit log: the cause of a label that a remediation backed up and then
// lost. <program> is the first part of the client's user agent.
func RefusedRestores(in RefusedRestoresInput) ([]string, error) {
	path := in.Lab.SpokeAuditLog(in.Cluster.Namespace, in.Cluster.Name)
	// The scenario wrote the Node before: a log that is not there is the
	// wrong one, not a log without refusals.
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("audit log of workload cluster %s/%s: %w", in.Cluster.Namespace, in.Cluster.Name, err)
	}
	events, err := controlplane.ReadAuditLog(path)
	if err != nil {
		return nil, err
	}
	return refusedRestores(events, in)
}

func refusedRestores(events []auditv1.Event, in RefusedRestoresInput) ([]string, error) {
	var out []string
	for _, ev := range events {
		if !refusedWriteTo(ev, in.Node, in.Since) {
			continue
		}
		carries, err := setsLabel(ev, in.Label)
		if err != nil {
			return nil, err
		}
		if carries {
			code := int(ev.ResponseStatus.Code)
			out = append(out, fmt.Sprintf("%s by %s: %d %s", ev.Verb, program(ev.UserAgent), code, http.StatusText(code)))
		}
	}
	return out, nil
}

func refusedWriteTo(ev auditv1.Event, node string, since time.Time) bool {
	return ev.ObjectRef != nil && ev.ObjectRef.Resource == "nodes" && ev.ObjectRef.Name == node &&
		ev.ResponseStatus != nil && ev.ResponseStatus.Code >= http.StatusBadRequest &&
		!ev.RequestReceivedTimestamp.Time.Before(since)
}

// setsLabel tells whether the write's body (a Node, or a patch of one)
// gives the label a value.
func setsLabel(ev auditv1.Event, label string) (bool, error) {
	if ev.RequestObject == nil || !strings.HasPrefix(strings.TrimSpace(string(ev.RequestObject.Raw)), "{") {
		return false, nil // no body, or a JSON patch: no restore writes one
	}
	var body struct {
		Metadata struct {
			Labels map[string]*string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(ev.RequestObject.Raw, &body); err != nil {
		return false, fmt.Errorf("audit event %s: request body: %w", ev.AuditID, err)
	}
	v, ok := body.Metadata.Labels[label]
	return ok && v != nil, nil
}

// program is the program name a user agent starts with.
func program(userAgent string) string {
	name, _, _ := strings.Cut(userAgent, "/")
	return name
}
