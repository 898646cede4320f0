package openshiftassistedconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// reconcileNormal runs the phases in order; each returns done=false when
// the config has to wait, having said why in a condition.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.machine == nil {
		setWaitingForMachine(s)
		return ctrl.Result{}, nil
	}
	if s.cluster == nil {
		setDataSecretWaiting(s.config, bootstrapv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("Cluster %s does not exist yet", s.machine.Spec.ClusterName))
		return ctrl.Result{}, nil
	}
	if done, err := r.dataSecretUpToDate(ctx, s); err != nil || done {
		return ctrl.Result{}, err
	}
	if !ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false) {
		setDataSecretWaiting(s.config, bootstrapv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("the infrastructure of Cluster %s is not provisioned yet", s.cluster.Name))
		return ctrl.Result{}, nil
	}
	infraEnv, err := r.reconcileInfraEnv(ctx, s)
	if err != nil || infraEnv == nil {
		return ctrl.Result{}, err
	}
	return r.reconcileDataSecret(ctx, s, infraEnv)
}

// dataSecretUpToDate says whether the bootstrap data exists already: the
// data of a Machine is written once, as the Machine may have booted it.
func (r *Reconciler) dataSecretUpToDate(ctx context.Context, s *scope) (bool, error) {
	if !ptr.Deref(s.config.Status.Initialization.DataSecretCreated, false) || s.config.Status.DataSecretName == "" {
		return false, nil
	}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.config.Namespace, Name: s.config.Status.DataSecretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
		ctrl.LoggerFrom(ctx).Info("Bootstrap data Secret is gone, writing it again", "Secret", s.config.Status.DataSecretName)
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get bootstrap data Secret: %w", err)
	}
	setDataSecretAvailable(s.config)
	return true, nil
}

// reconcileInfraEnv finds the cluster's install, applies the day-2 gate and
// makes sure the Machine's InfraEnv exists. It returns the InfraEnv once
// its discovery image is built, nil while waiting.
func (r *Reconciler) reconcileInfraEnv(ctx context.Context, s *scope) (*agentv1.InfraEnv, error) {
	cd, aci, err := r.clusterInstall(ctx, s)
	if err != nil || cd == nil {
		return nil, err
	}
	if !util.IsControlPlaneMachine(s.machine) && !acceptsWorkers(aci) {
		setInfraEnvWaiting(s.config, bootstrapv1.WaitingForInstallToAddHostsReason, fmt.Sprintf(
			"the cluster install is in state %q: a worker created while the control plane installs joins as a day-2 host once the install reaches %q",
			aci.Status.DebugInfo.State, hiveextv1.ClusterStateAddingHosts))
		return nil, nil
	}
	infraEnv, err := r.ensureInfraEnv(ctx, s, cd)
	if err != nil || infraEnv == nil {
		return nil, err
	}
	if ready, reason, msg := discoveryImageReady(infraEnv); !ready {
		setInfraEnvWaiting(s.config, reason, msg)
		setDataSecretWaiting(s.config, bootstrapv1.WaitingForInfraEnvReason, "waiting for the discovery image of InfraEnv "+infraEnv.Name)
		return nil, nil
	}
	setInfraEnvReady(s.config)
	return infraEnv, nil
}

// clusterInstall returns the cluster's one ClusterDeployment and its
// AgentClusterInstall; nil while the control plane has not made them.
func (r *Reconciler) clusterInstall(ctx context.Context, s *scope) (*hivev1.ClusterDeployment, *hiveextv1.AgentClusterInstall, error) {
	list := &hivev1.ClusterDeploymentList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.cluster.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}); err != nil {
		return nil, nil, fmt.Errorf("list ClusterDeployments: %w", err)
	}
	switch n := len(list.Items); {
	case n == 0:
		setInfraEnvWaiting(s.config, bootstrapv1.WaitingForClusterDeploymentReason,
			fmt.Sprintf("no ClusterDeployment labelled %s=%s yet: the control plane creates it", clusterv1.ClusterNameLabel, s.cluster.Name))
		return nil, nil, nil
	case n > 1:
		setInfraEnvWaiting(s.config, bootstrapv1.WaitingForClusterDeploymentReason,
			fmt.Sprintf("%d ClusterDeployments are labelled %s=%s; remove all but the control plane's", n, clusterv1.ClusterNameLabel, s.cluster.Name))
		return nil, nil, nil
	}
	cd := &list.Items[0]
	ref := cd.Spec.ClusterInstallRef
	if ref == nil || ref.Kind != hiveextv1.AgentClusterInstallKind {
		setInfraEnvWaiting(s.config, bootstrapv1.WaitingForClusterDeploymentReason,
			fmt.Sprintf("ClusterDeployment %s references no AgentClusterInstall yet", cd.Name))
		return nil, nil, nil
	}
	aci := &hiveextv1.AgentClusterInstall{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: ref.Name}, aci)
	switch {
	case apierrors.IsNotFound(err):
		setInfraEnvWaiting(s.config, bootstrapv1.WaitingForClusterDeploymentReason,
			fmt.Sprintf("AgentClusterInstall %s does not exist yet", ref.Name))
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("get AgentClusterInstall: %w", err)
	}
	return cd, aci, nil
}

// acceptsWorkers says whether a worker may register now: before the
// install starts (it joins the day-1 install) or once the install takes
// day-2 hosts.
func acceptsWorkers(aci *hiveextv1.AgentClusterInstall) bool {
	switch aci.Status.DebugInfo.State {
	case "", hiveextv1.ClusterStateInsufficient, hiveextv1.ClusterStateReady,
		hiveextv1.ClusterStatePendingForInput, hiveextv1.ClusterStateAddingHosts:
		return true
	}
	return false
}

// ensureInfraEnv creates the Machine's InfraEnv, named after it, bound to
// the ClusterDeployment and owned by the config (controller) and the
// Machine. It returns nil when an InfraEnv of that name belongs to someone
// else.
func (r *Reconciler) ensureInfraEnv(ctx context.Context, s *scope, cd *hivev1.ClusterDeployment) (*agentv1.InfraEnv, error) {
	infraEnv := &agentv1.InfraEnv{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.machine.Namespace, Name: s.machine.Name}, infraEnv)
	switch {
	case err == nil:
		if !metav1.IsControlledBy(infraEnv, s.config) {
			setInfraEnvWaiting(s.config, bootstrapv1.InfraEnvConflictReason, fmt.Sprintf(
				"InfraEnv %s exists and is not this config's: delete it or give the Machine another name", infraEnv.Name))
			return nil, nil
		}
		s.config.Status.InfraEnvName = infraEnv.Name
		return infraEnv, nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get InfraEnv: %w", err)
	}
	pullSecret := s.config.Spec.PullSecretRef
	if pullSecret == nil {
		pullSecret = cd.Spec.PullSecretRef
	}
	if pullSecret == nil {
		setInfraEnvWaiting(s.config, bootstrapv1.WaitingForClusterDeploymentReason, fmt.Sprintf(
			"neither the config nor ClusterDeployment %s names a pull secret", cd.Name))
		return nil, nil
	}
	infraEnv = desiredInfraEnv(s, cd, pullSecret)
	if err := controllerutil.SetControllerReference(s.config, infraEnv, r.Client.Scheme()); err != nil {
		return nil, fmt.Errorf("own InfraEnv: %w", err)
	}
	if err := controllerutil.SetOwnerReference(s.machine, infraEnv, r.Client.Scheme()); err != nil {
		return nil, fmt.Errorf("own InfraEnv: %w", err)
	}
	if err := r.Client.Create(ctx, infraEnv); err != nil {
		return nil, fmt.Errorf("create InfraEnv: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Created InfraEnv", "InfraEnv", infraEnv.Name)
	s.config.Status.InfraEnvName = infraEnv.Name
	return infraEnv, nil
}

func desiredInfraEnv(s *scope, cd *hivev1.ClusterDeployment, pullSecret *corev1.LocalObjectReference) *agentv1.InfraEnv {
	spec := &s.config.Spec
	ie := &agentv1.InfraEnv{
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.machine.Name,
			Namespace: s.machine.Namespace,
			Labels: map[string]string{
				clusterv1.ClusterNameLabel: s.cluster.Name,
				bootstrapv1.ConfigLabel:    s.config.Name,
			},
		},
		Spec: agentv1.InfraEnvSpec{
			ClusterRef:                 &agentv1.ClusterReference{Name: cd.Name, Namespace: cd.Namespace},
			PullSecretRef:              pullSecret.DeepCopy(),
			SSHAuthorizedKey:           spec.SSHAuthorizedKey,
			AdditionalNTPSources:       spec.AdditionalNTPSources,
			NMStateConfigLabelSelector: spec.NMStateConfigLabelSelector,
			CPUArchitecture:            spec.CPUArchitecture,
			AdditionalTrustBundle:      spec.AdditionalTrustBundle,
			// osImageVersion is not set: assisted-service refuses it on an
			// InfraEnv bound to a cluster, whose release picks the image.
		},
	}
	if p := spec.Proxy; p != nil {
		ie.Spec.Proxy = &agentv1.Proxy{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
	}
	for _, k := range spec.KernelArguments {
		ie.Spec.KernelArguments = append(ie.Spec.KernelArguments, agentv1.KernelArgument{Operation: k.Operation, Value: k.Value})
	}
	return ie
}

// discoveryImageReady reads an InfraEnv's ImageCreated condition (or, from
// a service that sets none, its ISO URL).
func discoveryImageReady(ie *agentv1.InfraEnv) (bool, string, string) {
	for _, c := range ie.Status.Conditions {
		if c.Type != agentv1.ConditionImageCreated {
			continue
		}
		switch {
		case c.Status == corev1.ConditionTrue:
			return true, "", ""
		case c.Reason == agentv1.ReasonImageCreationError:
			return false, bootstrapv1.DiscoveryImageFailedReason, fmt.Sprintf("assisted-service could not build the discovery image of InfraEnv %s: %s", ie.Name, c.Message)
		default:
			return false, bootstrapv1.WaitingForDiscoveryImageReason, fmt.Sprintf("InfraEnv %s: %s", ie.Name, c.Message)
		}
	}
	if ie.Status.ISODownloadURL != "" {
		return true, "", ""
	}
	return false, bootstrapv1.WaitingForDiscoveryImageReason, fmt.Sprintf("assisted-service has not built the discovery image of InfraEnv %s yet", ie.Name)
}

// reconcileDataSecret stores the InfraEnv's discovery ignition as the
// bootstrap data Secret, named after the config.
func (r *Reconciler) reconcileDataSecret(ctx context.Context, s *scope, ie *agentv1.InfraEnv) (ctrl.Result, error) {
	url := ie.Status.BootArtifacts.DiscoveryIgnitionURL
	if url == "" {
		setDataSecretWaiting(s.config, bootstrapv1.WaitingForInfraEnvReason,
			fmt.Sprintf("InfraEnv %s publishes no discovery ignition URL (status.bootArtifacts.discoveryIgnitionURL) yet", ie.Name))
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	data, err := r.Ignition.Fetch(ctx, url, []byte(s.config.Spec.AdditionalTrustBundle))
	if err != nil {
		setDataSecretWaiting(s.config, bootstrapv1.DiscoveryIgnitionUnavailableReason, fmt.Sprintf("%v; retrying", err))
		ctrl.LoggerFrom(ctx).Info("Discovery ignition unavailable", "url", url, "err", err.Error())
		return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
	}
	if err := r.writeDataSecret(ctx, s, data); err != nil {
		setDataSecretWaiting(s.config, bootstrapv1.DataSecretCreateFailedReason, err.Error())
		return ctrl.Result{}, err
	}
	s.config.Status.DataSecretName = s.config.Name
	s.config.Status.Initialization.DataSecretCreated = ptr.To(true)
	setDataSecretAvailable(s.config)
	return ctrl.Result{}, nil
}

func (r *Reconciler) writeDataSecret(ctx context.Context, s *scope, data []byte) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.config.Name,
			Namespace: s.config.Namespace,
			Labels:    map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name},
		},
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": data, "format": []byte(bootstrapv1.FormatIgnition)},
	}
	if err := controllerutil.SetControllerReference(s.config, secret, r.Client.Scheme()); err != nil {
		return fmt.Errorf("own bootstrap data Secret: %w", err)
	}
	err := r.Client.Create(ctx, secret)
	if err == nil {
		ctrl.LoggerFrom(ctx).Info("Created bootstrap data Secret", "Secret", secret.Name)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create bootstrap data Secret: %w", err)
	}
	existing := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(secret), existing); err != nil {
		return fmt.Errorf("get bootstrap data Secret: %w", err)
	}
	if !metav1.IsControlledBy(existing, s.config) {
		return fmt.Errorf("secret %s exists and is not this config's: delete it so the bootstrap data can be written", secret.Name)
	}
	if bytes.Equal(existing.Data["value"], data) && existing.Type == secret.Type {
		return nil
	}
	existing.Data, existing.Labels = secret.Data, secret.Labels
	if err := r.Client.Update(ctx, existing); err != nil {
		return fmt.Errorf("update bootstrap data Secret: %w", err)
	}
	return nil
}

// reconcileDelete removes the Machine's InfraEnv, as CAPOA's
// handleDeletion does, then lets the config go. The Agents that booted
// it go with it: their owner reference has the garbage collector delete
// them once it is gone, and assisted-service's Agent finalizer, finding
// no InfraEnv, then deregisters their hosts and leaves the cluster's
// Nodes to CAPI's Machine controller. Deleting the Agents first would
// have assisted-service take their Nodes out of the cluster too.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) error {
	setDeleting(s.config)
	if !controllerutil.ContainsFinalizer(s.config, Finalizer) {
		return nil
	}
	list := &agentv1.InfraEnvList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.config.Namespace),
		client.MatchingLabels{bootstrapv1.ConfigLabel: s.config.Name}); err != nil {
		return fmt.Errorf("list InfraEnvs of the config: %w", err)
	}
	var errs []error
	for i := range list.Items {
		ie := &list.Items[i]
		if !metav1.IsControlledBy(ie, s.config) {
			continue
		}
		if err := r.Client.Delete(ctx, ie); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("delete InfraEnv %s: %w", ie.Name, err))
		} else {
			ctrl.LoggerFrom(ctx).Info("Deleted InfraEnv", "InfraEnv", ie.Name)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(s.config, Finalizer)
	return nil
}
