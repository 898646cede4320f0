package assisted

import (
	"context"
	"fmt"
	"net/url"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

func (s *Service) setupInfraEnvController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("assisted-infraenv").
		For(&agentv1beta1.InfraEnv{}).
		Complete(reconcile.Func(s.reconcileInfraEnv))
}

// reconcileInfraEnv builds the InfraEnv's discovery ISO and publishes where
// to get it and its discovery ignition.
func (s *Service) reconcileInfraEnv(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ie := &agentv1beta1.InfraEnv{}
	if err := s.client.Get(ctx, req.NamespacedName, ie); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ie.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := ie.Status.DeepCopy()
	cond, buildErr := s.infraEnvImage(ctx, ie)
	conditionsv1.SetStatusConditionNoHeartbeat(&ie.Status.Conditions, cond)
	if !equality.Semantic.DeepEqual(before, &ie.Status) {
		if err := s.client.Status().Update(ctx, ie); err != nil {
			return ctrl.Result{}, err
		}
	}
	if buildErr == nil {
		s.published.Store(string(ie.UID), s.discoveryConfig(string(ie.UID)))
	}
	return ctrl.Result{}, buildErr
}

// infraEnvImage checks the inputs, builds the image and fills the status;
// the condition says how it went.
func (s *Service) infraEnvImage(ctx context.Context, ie *agentv1beta1.InfraEnv) (conditionsv1.Condition, error) {
	failed := func(reason, msg string) conditionsv1.Condition {
		return conditionsv1.Condition{Type: agentv1beta1.ConditionImageCreated, Status: corev1.ConditionFalse, Reason: reason, Message: msg}
	}
	if ie.Spec.PullSecretRef == nil || ie.Spec.PullSecretRef.Name == "" {
		return failed(agentv1beta1.ReasonInputError, "spec.pullSecretRef is required: name the Secret with the pull secret"), nil
	}
	secret := &corev1.Secret{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ie.Namespace, Name: ie.Spec.PullSecretRef.Name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return failed(agentv1beta1.ReasonInputError, fmt.Sprintf("pull secret %s/%s not found", ie.Namespace, ie.Spec.PullSecretRef.Name)), nil
		}
		return failed(agentv1beta1.ReasonBackendError, err.Error()), err
	}
	id := string(ie.UID)
	if ie.Annotations[enableIronicAgentAnnotation] == "true" {
		s.ironicAgent.Store(id, true)
	}
	ns, ref := ie.Namespace, ""
	if r := ie.Spec.MirrorRegistryRef; r != nil {
		ref = r.Name
		if r.Namespace != "" {
			ns = r.Namespace
		}
	}
	own, err := s.mirrorRegistryOf(ctx, ns, ref)
	if err != nil {
		return failed(agentv1beta1.ReasonImageCreationError, "Failed to create image: "+err.Error()), nil
	}
	m, err := s.discoveryMirrors(ctx, own)
	if err != nil {
		return failed(agentv1beta1.ReasonImageCreationError, "Failed to create image: "+err.Error()), err
	}
	if m != nil {
		s.discoveryMirror.Store(id, m)
	} else {
		s.discoveryMirror.Delete(id)
	}
	if _, err := s.discoveryImage(id); err != nil {
		return failed(agentv1beta1.ReasonImageCreationError, "Failed to create image: "+err.Error()), err
	}
	if s.imageRebuilt(ie, id) {
		now := metav1.Now()
		ie.Status.CreatedTime = &now
		s.events.add(ie.Namespace, ie.Name, "Image for InfraEnv %s created", ie.Name)
	}
	ie.Status.ISODownloadURL = s.isoURL(id)
	ie.Status.BootArtifacts.DiscoveryIgnitionURL = s.ignitionURL(id)
	ie.Status.DebugInfo.EventsURL = s.URL() + "/api/assisted-install/v2/events?namespace=" + url.QueryEscape(ie.Namespace) + "&name=" + url.QueryEscape(ie.Name)
	ie.Status.AgentLabelSelector = metav1.LabelSelector{MatchLabels: map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name}}
	return conditionsv1.Condition{Type: agentv1beta1.ConditionImageCreated, Status: corev1.ConditionTrue,
		Reason: agentv1beta1.ReasonInfraEnvAvailable, Message: "InfraEnv is available: Image has been created"}, nil
}

// imageRebuilt tells whether the InfraEnv's image is new: a new URL, or
// the same URL serving what another discovery config baked (the ironic
// agent added). Upstream stamps status.createdTime then, and the 60 s
// cooldown of the hosts' images counts from it.
func (s *Service) imageRebuilt(ie *agentv1beta1.InfraEnv, id string) bool {
	cfg := s.discoveryConfig(id)
	prev, known := s.published.Load(id)
	return ie.Status.ISODownloadURL != s.isoURL(id) || (known && prev.(agentapi.DiscoveryConfig) != cfg)
}
