package hypershift

import (
	"context"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/paritylab/paritylab/lab/workload"
	"github.com/paritylab/paritylab/lab/workload/cvo"
)

// apiLabelPrefix marks the HostedCluster labels HyperShift copies onto
// the HostedControlPlane.
const apiLabelPrefix = "api.openshift.com/"

// ensureHostedControlPlane writes the HostedControlPlane as HyperShift's
// HostedCluster controller does (its spec, from the HostedCluster) and,
// in the control-plane operator's place, its status from the running
// control plane.
func (o *Operator) ensureHostedControlPlane(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, rt *hostedRuntime) (*hypershiftv1beta1.HostedControlPlane, error) {
	hcp := &hypershiftv1beta1.HostedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ControlPlaneNamespace(hc), Name: hc.Name}}
	_, err := controllerutil.CreateOrUpdate(ctx, o.client, hcp, func() error {
		annotate(hcp, hc)
		for k, v := range hc.Labels {
			if len(k) > len(apiLabelPrefix) && k[:len(apiLabelPrefix)] == apiLabelPrefix {
				if hcp.Labels == nil {
					hcp.Labels = map[string]string{}
				}
				hcp.Labels[k] = v
			}
		}
		hcp.Spec = hostedControlPlaneSpec(hc)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("write HostedControlPlane %s/%s: %w", hcp.Namespace, hcp.Name, err)
	}
	before := hcp.Status.DeepCopy()
	o.hostedControlPlaneStatus(ctx, hc, hcp, rt)
	if equality.Semantic.DeepEqual(before, &hcp.Status) {
		return hcp, nil
	}
	if err := o.client.Status().Update(ctx, hcp); err != nil {
		return nil, fmt.Errorf("write the status of HostedControlPlane %s/%s: %w", hcp.Namespace, hcp.Name, err)
	}
	return hcp, nil
}

// hostedControlPlaneSpec is the HostedControlPlane's spec as HyperShift
// derives it from the HostedCluster (reconcileHostedControlPlane): the
// Secrets by their control-plane names, and the agent platform as None.
func hostedControlPlaneSpec(hc *hypershiftv1beta1.HostedCluster) hypershiftv1beta1.HostedControlPlaneSpec {
	s := hc.Spec.DeepCopy()
	spec := hypershiftv1beta1.HostedControlPlaneSpec{
		ReleaseImage: s.Release.Image, UpdateService: s.UpdateService, Channel: s.Channel,
		PullSecret: corev1.LocalObjectReference{Name: PullSecretName},
		IssuerURL:  s.IssuerURL, Networking: s.Networking, ClusterID: s.ClusterID, InfraID: s.InfraID,
		Platform: s.Platform, DNS: s.DNS, ServiceAccountSigningKey: s.ServiceAccountSigningKey,
		ControllerAvailabilityPolicy: s.ControllerAvailabilityPolicy, InfrastructureAvailabilityPolicy: s.InfrastructureAvailabilityPolicy,
		FIPS: s.FIPS, KubeAPIServerDNSName: s.KubeAPIServerDNSName, Services: s.Services, AuditWebhook: s.AuditWebhook,
		Etcd: s.Etcd, Configuration: s.Configuration, OperatorConfiguration: s.OperatorConfiguration,
		ImageContentSources: s.ImageContentSources, SecretEncryption: s.SecretEncryption, PausedUntil: s.PausedUntil,
		OLMCatalogPlacement: s.OLMCatalogPlacement, Autoscaling: s.Autoscaling, AutoNode: s.AutoNode,
		NodeSelector: s.NodeSelector, Tolerations: s.Tolerations,
	}
	if s.ControlPlaneRelease != nil {
		spec.ControlPlaneReleaseImage = &s.ControlPlaneRelease.Image
	}
	if s.SSHKey.Name != "" {
		spec.SSHKey.Name = SSHKeySecretName
	}
	if s.AdditionalTrustBundle != nil {
		spec.AdditionalTrustBundle = &corev1.LocalObjectReference{Name: "user-ca-bundle"}
	}
	if spec.Platform.Type == hypershiftv1beta1.AgentPlatform {
		spec.Platform.Type = hypershiftv1beta1.NonePlatform
	}
	return spec
}

// hostedControlPlaneStatus fills what the control-plane operator and the
// hosted cluster config operator report: the endpoint, the admin
// kubeconfig, ready and initialized, the version from the hosted
// ClusterVersion, and the availability conditions, which hold while the
// control plane runs.
func (o *Operator) hostedControlPlaneStatus(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, hcp *hypershiftv1beta1.HostedControlPlane, rt *hostedRuntime) {
	st := &hcp.Status
	st.ControlPlaneEndpoint = hypershiftv1beta1.APIEndpoint{Host: o.apiHost(hc), Port: int32(rt.apiPort)}
	st.KubeConfig = &hypershiftv1beta1.KubeconfigSecretRef{Name: AdminKubeconfigSecretName, Key: KubeconfigKey}
	st.Ready, st.Initialized, st.ExternalManagedControlPlane = true, true, ptr.To(true)
	if vs, err := hostedVersion(ctx, rt.cluster); err != nil {
		o.opts.Logger.Error(err, "Read the hosted ClusterVersion", "hostedCluster", hc.Name)
	} else {
		st.VersionStatus, st.Version, st.ReleaseImage = vs, vs.Desired.Version, vs.Desired.Image
	}
	for _, t := range []hypershiftv1beta1.ConditionType{hypershiftv1beta1.HostedControlPlaneAvailable, hypershiftv1beta1.InfrastructureReady,
		hypershiftv1beta1.EtcdAvailable, hypershiftv1beta1.KubeAPIServerAvailable} {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(t), Status: metav1.ConditionTrue,
			Reason: hypershiftv1beta1.AsExpectedReason, ObservedGeneration: hcp.Generation})
	}
}

// apiHost is where guests reach the hosted API server: the APIServer
// service's NodePort address, else the operator's AdvertiseHost (the
// lab serves every NodePort at its host).
func (o *Operator) apiHost(hc *hypershiftv1beta1.HostedCluster) string {
	for _, s := range hc.Spec.Services {
		np := s.ServicePublishingStrategy.NodePort
		if s.Service == hypershiftv1beta1.APIServer && np != nil && np.Address != "" {
			return np.Address
		}
	}
	return o.opts.AdvertiseHost
}

// hostedVersion is the hosted cluster's version status as HyperShift's
// hosted cluster config operator reads it from the ClusterVersion.
func hostedVersion(ctx context.Context, c *workload.Cluster) (*hypershiftv1beta1.ClusterVersionStatus, error) {
	scheme, err := workload.Scheme()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	cv := &configv1.ClusterVersion{}
	if err := cl.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv); err != nil {
		return nil, err
	}
	return &hypershiftv1beta1.ClusterVersionStatus{
		Desired: cv.Status.Desired, History: cv.Status.History, ObservedGeneration: cv.Status.ObservedGeneration,
		AvailableUpdates: cv.Status.AvailableUpdates, ConditionalUpdates: cv.Status.ConditionalUpdates,
	}, nil
}
