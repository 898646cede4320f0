package mapi

import (
	"context"
	"strings"
	"testing"
	"time"

	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/workload"
)

// The workload cluster's API server calls the machine API's
// Metal3Remediation(Template) webhooks: a template gets upstream's
// defaults (Reboot, 600 s, one retry), and what the bare-metal machine
// controller refuses is refused with the field to fix. Once the machine
// API is gone the API server lets objects through, as upstream's failure
// policy Ignore does.
func TestMetal3RemediationWebhooks(t *testing.T) {
	ctx := context.Background()
	m := startMachineAPI(t, nil)

	tmpl := &capm3v1beta1.Metal3RemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: workload.MachineAPINamespace},
		Spec: capm3v1beta1.Metal3RemediationTemplateSpec{Template: capm3v1beta1.Metal3RemediationTemplateResource{
			Spec: capm3v1beta1.Metal3RemediationSpec{Strategy: &capm3v1beta1.RemediationStrategy{}}}}}
	createAndClean(t, tmpl)
	get(t, tmpl)
	if s := tmpl.Spec.Template.Spec.Strategy; s.Type != capm3v1beta1.RebootRemediationStrategy || s.RetryLimit != 1 || s.Timeout == nil || s.Timeout.Duration != 600*time.Second {
		t.Errorf("template defaulted to %+v, want Reboot, one retry, 600s", s)
	}

	short := rebootSpec(1)
	short.Strategy.Timeout = &metav1.Duration{Duration: 30 * time.Second}
	refused := []struct {
		name string
		obj  client.Object
		want string
	}{
		{"short-timeout-template", &capm3v1beta1.Metal3RemediationTemplate{
			Spec: capm3v1beta1.Metal3RemediationTemplateSpec{Template: capm3v1beta1.Metal3RemediationTemplateResource{Spec: short}}},
			"spec.template.spec.strategy.timeout: Invalid value: \"30s\": min duration is 1m40s"},
		{"no-retries", &capm3v1beta1.Metal3Remediation{Spec: rebootSpec(0)}, "spec.strategy.retryLimit: Invalid value: 0: minimum retry limit is 1"},
		{"no-strategy", &capm3v1beta1.Metal3Remediation{}, "spec.strategy: Required value"},
	}
	for _, c := range refused {
		c.obj.SetName(c.name)
		c.obj.SetNamespace(workload.MachineAPINamespace)
		err := suite.client.Create(ctx, c.obj)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: created with %v, want refused with %q", c.name, err, c.want)
		}
	}

	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	late := &capm3v1beta1.Metal3Remediation{ObjectMeta: metav1.ObjectMeta{Name: "webhook-down", Namespace: workload.MachineAPINamespace}, Spec: rebootSpec(0)}
	createAndClean(t, late)
}

// The strategy type is checked too (the CRD accepts any string).
func TestRemediationStrategyType(t *testing.T) {
	s := &capm3v1beta1.RemediationStrategy{Type: "Replace", RetryLimit: 1}
	err := invalidStrategy("Metal3Remediation", "r", field.NewPath("spec", "strategy"), s)
	if err == nil || !strings.Contains(err.Error(), "spec.strategy.type: Invalid value: \"Replace\": only supported remediation strategy is reboot") {
		t.Errorf("type Replace: %v", err)
	}
	s.Type = capm3v1beta1.RebootRemediationStrategy
	if err := invalidStrategy("Metal3Remediation", "r", field.NewPath("spec", "strategy"), s); err != nil {
		t.Errorf("Reboot with one retry and no timeout refused: %v", err)
	}
}

func createAndClean(t *testing.T, obj client.Object) {
	t.Helper()
	if err := suite.client.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), obj) })
}
