package mapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	maowebhooks "github.com/openshift/machine-api-operator/pkg/webhooks"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/paritylab/paritylab/lab/controllers"
)

// The limits of the bare-metal machine controller's Metal3Remediation
// webhooks (cluster-api-provider-baremetal pkg/webhook): a strategy's
// timeout, when set, of at least 100 s (templates default it to 600 s),
// Reboot the only strategy, at least one retry.
const (
	minRemediationTimeout     = 100 * time.Second
	defaultRemediationTimeout = 600 * time.Second
	minRemediationRetryLimit  = 1
)

// metal3RemediationWebhook is the port of the machine controller's
// Metal3Remediation webhook: no defaults, the strategy validated.
type metal3RemediationWebhook struct{}

func (metal3RemediationWebhook) Default(context.Context, *capm3v1beta1.Metal3Remediation) error {
	return nil
}

func (metal3RemediationWebhook) ValidateCreate(_ context.Context, r *capm3v1beta1.Metal3Remediation) (admission.Warnings, error) {
	return nil, invalidStrategy("Metal3Remediation", r.Name, field.NewPath("spec", "strategy"), r.Spec.Strategy)
}

func (metal3RemediationWebhook) ValidateUpdate(_ context.Context, _, r *capm3v1beta1.Metal3Remediation) (admission.Warnings, error) {
	return nil, invalidStrategy("Metal3Remediation", r.Name, field.NewPath("spec", "strategy"), r.Spec.Strategy)
}

func (metal3RemediationWebhook) ValidateDelete(context.Context, *capm3v1beta1.Metal3Remediation) (admission.Warnings, error) {
	return nil, nil
}

// metal3RemediationTemplateWebhook is the port of the machine
// controller's Metal3RemediationTemplate webhook: Reboot, 600 s and one
// retry by default, then the same validation as a remediation's.
type metal3RemediationTemplateWebhook struct{}

func (metal3RemediationTemplateWebhook) Default(_ context.Context, t *capm3v1beta1.Metal3RemediationTemplate) error {
	s := t.Spec.Template.Spec.Strategy
	if s == nil {
		return nil // refused by the validator
	}
	if s.Type == "" {
		s.Type = capm3v1beta1.RebootRemediationStrategy
	}
	if s.Timeout == nil {
		s.Timeout = &metav1.Duration{Duration: defaultRemediationTimeout}
	}
	if s.RetryLimit < minRemediationRetryLimit {
		s.RetryLimit = minRemediationRetryLimit
	}
	return nil
}

func (metal3RemediationTemplateWebhook) ValidateCreate(_ context.Context, t *capm3v1beta1.Metal3RemediationTemplate) (admission.Warnings, error) {
	return nil, invalidStrategy("Metal3RemediationTemplate", t.Name, field.NewPath("spec", "template", "spec", "strategy"), t.Spec.Template.Spec.Strategy)
}

func (metal3RemediationTemplateWebhook) ValidateUpdate(_ context.Context, _, t *capm3v1beta1.Metal3RemediationTemplate) (admission.Warnings, error) {
	return nil, invalidStrategy("Metal3RemediationTemplate", t.Name, field.NewPath("spec", "template", "spec", "strategy"), t.Spec.Template.Spec.Strategy)
}

func (metal3RemediationTemplateWebhook) ValidateDelete(context.Context, *capm3v1beta1.Metal3RemediationTemplate) (admission.Warnings, error) {
	return nil, nil
}

// invalidStrategy is the Invalid error for what is wrong with a
// remediation strategy at path, or nil. Upstream's webhooks dereference a
// strategy left out and answer with the panic; the object is refused
// either way, here with a message that says what to fix.
func invalidStrategy(kind, name string, path *field.Path, s *capm3v1beta1.RemediationStrategy) error {
	var errs field.ErrorList
	if s == nil {
		errs = append(errs, field.Required(path, "a Reboot strategy with a retry limit of at least 1"))
		return apierrors.NewInvalid(capm3v1beta1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
	}
	if s.Timeout != nil && s.Timeout.Duration < minRemediationTimeout {
		errs = append(errs, field.Invalid(path.Child("timeout"), s.Timeout, fmt.Sprintf("min duration is %s", minRemediationTimeout)))
	}
	if s.Type != capm3v1beta1.RebootRemediationStrategy {
		errs = append(errs, field.Invalid(path.Child("type"), s.Type, "only supported remediation strategy is reboot"))
	}
	if s.RetryLimit < minRemediationRetryLimit {
		errs = append(errs, field.Invalid(path.Child("retryLimit"), s.RetryLimit, fmt.Sprintf("minimum retry limit is %d", minRemediationRetryLimit)))
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(capm3v1beta1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}

// addRemediationWebhooks registers both webhooks with the manager's
// webhook server, at the paths MAO's webhook configurations name.
func addRemediationWebhooks(mgr manager.Manager) error {
	return errors.Join(
		builder.WebhookManagedBy(mgr, &capm3v1beta1.Metal3Remediation{}).
			WithDefaulter(metal3RemediationWebhook{}, admission.DefaulterRemoveUnknownOrOmitableFields).
			WithValidator(metal3RemediationWebhook{}).Complete(),
		builder.WebhookManagedBy(mgr, &capm3v1beta1.Metal3RemediationTemplate{}).
			WithDefaulter(metal3RemediationTemplateWebhook{}, admission.DefaulterRemoveUnknownOrOmitableFields).
			WithValidator(metal3RemediationTemplateWebhook{}).Complete(),
	)
}

// remediationWebhookConfigurations are MAO's configurations for the
// Metal3Remediation(Template) webhooks (upstream failure policy Ignore),
// pointed at the webhook server of this process instead of the machine
// controller's Service.
func remediationWebhookConfigurations(ep controllers.WebhookEndpoint) (*controllers.WebhookConfigurations, error) {
	cfgs := &controllers.WebhookConfigurations{
		Mutating:   []admissionregistrationv1.MutatingWebhookConfiguration{*maowebhooks.NewMetal3RemediationMutatingWebhookConfiguration()},
		Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{*maowebhooks.NewMetal3RemediationValidatingWebhookConfiguration()},
	}
	if err := cfgs.ServeFrom(ep, "paritylab"); err != nil {
		return nil, fmt.Errorf("point the Metal3Remediation webhooks at the machine API: %w", err)
	}
	return cfgs, nil
}

// webhookServing is the machine API's webhook server on loopback: its
// endpoint, certificate directory and whether Stop removes that.
type webhookServing struct {
	endpoint controllers.WebhookEndpoint
	certDir  string
	temp     bool
}

// newWebhookServing picks a loopback port and writes a serving
// certificate into certDir, or into a temporary directory when certDir is
// empty.
func newWebhookServing(certDir string) (*webhookServing, error) {
	w := &webhookServing{certDir: certDir}
	if certDir == "" {
		dir, err := os.MkdirTemp("", "paritylab-machine-api-webhooks-")
		if err != nil {
			return nil, fmt.Errorf("machine API webhook cert dir: %w", err)
		}
		w.certDir, w.temp = dir, true
	}
	ep, err := controllers.NewWebhookEndpoint("127.0.0.1", w.certDir)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("machine API webhook endpoint: %w", err), w.close())
	}
	w.endpoint = ep
	return w, nil
}

func (w *webhookServing) server() webhook.Server {
	return webhook.NewServer(webhook.Options{Host: w.endpoint.Host, Port: w.endpoint.Port, CertDir: w.certDir})
}

// install waits until the manager's webhook server accepts connections,
// then writes the webhook configurations into the workload cluster.
func (w *webhookServing) install(ctx context.Context, mgr manager.Manager, c client.Client) error {
	started := mgr.GetWebhookServer().StartedChecker()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return started(nil) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the machine API webhook server: %w", err)
	}
	cfgs, err := remediationWebhookConfigurations(w.endpoint)
	if err != nil {
		return err
	}
	if err := cfgs.Apply(ctx, c); err != nil {
		return fmt.Errorf("machine API webhooks: %w", err)
	}
	return nil
}

// close removes a temporary certificate directory.
func (w *webhookServing) close() error {
	if w == nil || !w.temp {
		return nil
	}
	if err := os.RemoveAll(w.certDir); err != nil {
		return fmt.Errorf("remove machine API webhook cert dir: %w", err)
	}
	return nil
}
