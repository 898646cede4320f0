package mapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/workload"
)

// approver approves node client CSRs in the role of
// cluster-machine-approver: a bootstrapping kubelet's request for
// system:node:<name> is approved only when a Machine of the machine API
// namespace without a Node yet has <name> as an address. Other requests
// are left for someone else; unmatched ones are looked at again.
type approver struct {
	client    client.Client
	certs     kubernetes.Interface
	namespace string
	recheck   time.Duration
	log       logr.Logger
}

func (r *approver) setupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("machine-approver").
		For(&certificatesv1.CertificateSigningRequest{}).Complete(r)
}

func (r *approver) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.client.Get(ctx, req.NamespacedName, csr); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if csr.Spec.SignerName != agentapi.KubeletClientSigner || workload.CSRDecided(csr) {
		return reconcile.Result{}, nil
	}
	node, err := nodeClientRequest(csr)
	if err != nil {
		r.log.Info("Not approving node client CSR", "csr", csr.Name, "reason", err.Error())
		return reconcile.Result{}, nil
	}
	m, err := r.machineFor(ctx, node)
	if err != nil {
		return reconcile.Result{}, err
	}
	if m == nil {
		r.log.V(1).Info("No Machine waits for this node; CSR stays pending", "csr", csr.Name, "node", node)
		return reconcile.Result{RequeueAfter: r.recheck}, nil
	}
	return reconcile.Result{}, r.approve(ctx, csr, node, m)
}

// nodeClientRequest checks a CSR is a bootstrapping kubelet's request for
// its client certificate and returns the node name.
func nodeClientRequest(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	if !slices.Contains(csr.Spec.Groups, workload.BootstrapGroup) {
		return "", fmt.Errorf("requester %s is not in %s", csr.Spec.Username, workload.BootstrapGroup)
	}
	return workload.NodeClientCSRNode(csr)
}

// machineFor is the Machine without a Node whose addresses name node.
func (r *approver) machineFor(ctx context.Context, node string) (*machinev1beta1.Machine, error) {
	machines := &machinev1beta1.MachineList{}
	if err := r.client.List(ctx, machines, client.InNamespace(r.namespace)); err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	for i := range machines.Items {
		m := &machines.Items[i]
		if m.Status.NodeRef != nil || !m.DeletionTimestamp.IsZero() {
			continue
		}
		for _, a := range m.Status.Addresses {
			switch a.Type {
			case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
				if strings.EqualFold(a.Address, node) {
					return m, nil
				}
			}
		}
	}
	return nil, nil
}

func (r *approver) approve(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, node string, m *machinev1beta1.Machine) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "NodeCSRApprove",
		Message: "node " + node + " is the host of machine " + m.Name, LastUpdateTime: metav1.Now(),
	})
	if _, err := r.certs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("approve CSR %s of node %s: %w", csr.Name, node, err)
	}
	r.log.Info("Node client CSR approved", "csr", csr.Name, "node", node, "machine", m.Name)
	return nil
}
