package assisted

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// A day-2 host that joins with a bootstrap credential (one that followed
// a pointer Ignition) asks for its client certificate with a CSR, which
// assisted-service's agent controller approves when nobody else would
// (agent_controller.go shouldApproveCSRsForAgent, approveAIHostsCSRs;
// csr_utils.go validateNodeClientCSR): while the host is Rebooting or
// Joined, for a cluster on platform None or a host without a
// BareMetalHost, a pending CSR for system:node:<its host name> from the
// node-bootstrapper service account with exactly a kubelet client's
// usages and no alternative names. Approved CSRs are recorded in the
// Agent's csrStatus.
//
// Departures: serving CSRs are not looked at (lab nodes ask for none),
// the BareMetal-without-machine-API case is not (lab clusters on
// BareMetal run their machine API), and csrStatus.lastApprovalAttempt is
// left alone (every attempt would rewrite the Agent).

// nodeBootstrapper is the identity OpenShift's bootstrap kubeconfig
// carries (csr_utils.go isReqFromNodeBootstrapper).
const nodeBootstrapperUser = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"

var nodeBootstrapperGroups = sets.New("system:serviceaccounts", "system:serviceaccounts:openshift-machine-config-operator", "system:authenticated")

// approvingStages are the stages in which the controller approves.
var approvingStages = []agentv1beta1.HostStage{agentv1beta1.HostStageRebooting, agentv1beta1.HostStageJoined}

// approvesCSRsOf says whether the service approves the Agent's CSRs now.
func (s *Service) approvesCSRsOf(ctx context.Context, a *agentv1beta1.Agent, aci *hiveextv1beta1.AgentClusterInstall) (bool, error) {
	if a.Status.Kind != agentv1beta1.HostKindAddToExistingClusterHost || !isBound(a) || aci == nil ||
		!slices.Contains(approvingStages, a.Status.Progress.CurrentStage) {
		return false, nil
	}
	if networkingOf(aci).platform == hiveextv1beta1.PlatformTypeNone {
		return true, nil
	}
	hasBMH, err := s.agentHasBMH(ctx, a)
	return !hasBMH, err
}

// agentHasBMH says whether a BareMetalHost booted the Agent's host (the
// BMAC's label names it).
func (s *Service) agentHasBMH(ctx context.Context, a *agentv1beta1.Agent) (bool, error) {
	name := a.Labels[agentv1beta1.BareMetalHostLabel]
	if name == "" {
		return false, nil
	}
	err := s.client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, &bmov1alpha1.BareMetalHost{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// approveDay2CSRs approves the host's pending client CSRs in its cluster;
// it says whether one is still to come (the host's is not approved yet).
func (s *Service) approveDay2CSRs(ctx context.Context, a *agentv1beta1.Agent) (bool, error) {
	ref := a.Spec.ClusterDeploymentName
	c, err := s.spokeClient(ctx, ClusterKey{Namespace: ref.Namespace, Name: ref.Name})
	if err != nil {
		return false, err
	}
	csrs := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, csrs); err != nil {
		return false, fmt.Errorf("list CSRs of %s: %w", ref.Name, err)
	}
	approved := false
	for i := range csrs.Items {
		csr := &csrs.Items[i]
		if clientCSROf(csr, hostname(a)) != nil {
			continue
		}
		if csrApproved(csr) {
			approved = true
			continue
		}
		if err := approveCSR(ctx, c, csr); err != nil {
			return false, err
		}
		approved = true
		a.Status.CSRStatus.ApprovedCSRs = append(a.Status.CSRStatus.ApprovedCSRs, agentv1beta1.CSRInfo{Name: csr.Name, Type: agentv1beta1.CSRTypeClient, ApprovedAt: metav1.Now()})
		s.events.add(a.Namespace, a.Name, "Host %s: CSR %s approved", hostname(a), csr.Name)
	}
	return !approved, nil
}

// clientCSROf checks a CSR is the node's kubelet client request from the
// node bootstrapper; nil means it is.
func clientCSROf(csr *certificatesv1.CertificateSigningRequest, node string) error {
	if csr.Spec.SignerName != agentapi.KubeletClientSigner {
		return errors.New("not a kubelet client request")
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return errors.New("request is not PEM")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	switch {
	case !strings.EqualFold(req.Subject.CommonName, "system:node:"+node):
		return fmt.Errorf("subject %q is another host's", req.Subject.CommonName)
	case !slices.Equal(req.Subject.Organization, []string{"system:nodes"}):
		return fmt.Errorf("organizations %v", req.Subject.Organization)
	case len(req.DNSNames)+len(req.EmailAddresses)+len(req.IPAddresses) > 0:
		return errors.New("alternative names on a client request")
	case !exactUsages(csr.Spec.Usages, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth) &&
		!exactUsages(csr.Spec.Usages, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth):
		return fmt.Errorf("usages %v", csr.Spec.Usages)
	case csr.Spec.Username != nodeBootstrapperUser || !nodeBootstrapperGroups.Equal(sets.New(csr.Spec.Groups...)):
		return fmt.Errorf("requester %s is not the node bootstrapper", csr.Spec.Username)
	}
	return nil
}

func exactUsages(got []certificatesv1.KeyUsage, want ...certificatesv1.KeyUsage) bool {
	return sets.New(got...).Equal(sets.New(want...)) && len(got) == len(want)
}

func csrApproved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// approveCSR approves with upstream's reason and message
// (spoke_k8s_client.go ApproveCsr).
func approveCSR(ctx context.Context, c client.Client, csr *certificatesv1.CertificateSigningRequest) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "NodeCSRApprove",
		Message: "This CSR was approved by the assisted-service", LastUpdateTime: metav1.Now(),
	})
	if err := c.SubResource("approval").Update(ctx, csr); err != nil {
		return fmt.Errorf("approve CSR %s: %w", csr.Name, err)
	}
	return nil
}
