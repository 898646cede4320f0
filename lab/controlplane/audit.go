package controlplane

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/yaml"
)

// The API server's audit log, when Options.AuditedResources names
// resources: one JSON event per line, at the Request level (who asked
// what of which object, with the request's body, and what the server
// answered, never the response's body), of the writes to those resources
// only. Scenarios read it to tell why a change to an object was lost: a
// write that carried it and that the server refused. Only resources that
// hold no secrets belong there.

// auditedVerbs are the writes an audit policy records.
var auditedVerbs = []string{"create", "update", "patch", "delete"}

// auditPolicy is the policy for the core-group resources: their writes
// at Request level once the response is complete, nothing else.
func auditPolicy(resources []string) auditv1.Policy {
	return auditv1.Policy{
		TypeMeta:   metav1.TypeMeta{APIVersion: auditv1.SchemeGroupVersion.String(), Kind: "Policy"},
		OmitStages: []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted},
		Rules: []auditv1.PolicyRule{
			{Level: auditv1.LevelRequest, Verbs: auditedVerbs, Resources: []auditv1.GroupResources{{Group: "", Resources: resources}}},
			{Level: auditv1.LevelNone},
		},
	}
}

func (cp *ControlPlane) writeAuditPolicy() (string, error) {
	raw, err := yaml.Marshal(auditPolicy(cp.opts.AuditedResources))
	if err != nil {
		return "", fmt.Errorf("encode audit policy: %w", err)
	}
	path := filepath.Join(cp.opts.Dir, "audit-policy.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", fmt.Errorf("write audit policy: %w", err)
	}
	return path, nil
}

// auditArgs are kube-apiserver's audit flags: a JSON log written before
// each response (blocking mode), so that a reader sees every write a
// client already got its answer for.
func (cp *ControlPlane) auditArgs(policy string) []string {
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + cp.AuditLogPath(),
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
	}
}

// AuditLogPath is the API server's audit log, empty when it keeps none.
func (cp *ControlPlane) AuditLogPath() string {
	if len(cp.opts.AuditedResources) == 0 {
		return ""
	}
	return AuditLogPath(cp.opts.LogDir, cp.opts.Name)
}

// AuditLogPath is where a control plane named name with log dir logDir
// keeps its API server's audit log.
func AuditLogPath(logDir, name string) string {
	return filepath.Join(logDir, name+"-kube-apiserver-audit.log")
}

// ReadAuditLog returns the events of an audit log, oldest first; a log
// that does not exist (yet) has none.
func ReadAuditLog(path string) ([]auditv1.Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	var out []auditv1.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for line := 1; sc.Scan(); line++ {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log %s line %d: %w", path, line, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit log %s: %w", path, err)
	}
	return out, nil
}
