package hypershift

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/workload"
)

// cluster-machine-approver's rules for a node's client CSR
// (pkg/controller/csr_check.go authorizeNodeClientCSR), as HyperShift runs
// it for a hosted cluster: on the hosted cluster's CSRs, with the CAPI
// Machines of the control-plane namespace.
const (
	approveReason  = "NodeCSRApprove"
	approveMessage = "This CSR was approved by the Node CSR Approver (cluster-machine-approver)"
	// A CSR counts for a Machine from 10s before its creation to 2h after.
	maxMachineClockSkew = 10 * time.Second
	maxMachineDelta     = 2 * time.Hour
	// approverRecheck is how soon a CSR no Machine matches yet is looked
	// at again (the Machine's addresses come with its AgentMachine's).
	approverRecheck = 5 * time.Second
)

// nodeBootstrapperGroups are the requester's groups, exactly.
var nodeBootstrapperGroups = sets.New(append([]string{"system:authenticated"}, workload.NodeBootstrapperGroups...)...)

// approver approves node client CSRs of a hosted cluster.
type approver struct {
	// hosted reads the hosted cluster's CSRs and Nodes; certs approves.
	hosted client.Client
	certs  kubernetes.Interface
	// machines reads the hub's Machines of namespace.
	machines  client.Reader
	namespace string
	log       logr.Logger
}

func (r *approver) setupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("machine-approver").
		For(&certificatesv1.CertificateSigningRequest{}).Complete(r)
}

func (r *approver) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.hosted.Get(ctx, req.NamespacedName, csr); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if csr.Spec.SignerName != agentapi.KubeletClientSigner || workload.CSRDecided(csr) {
		return reconcile.Result{}, nil
	}
	if csr.Spec.Username != workload.NodeBootstrapperUser || !nodeBootstrapperGroups.Equal(sets.New(csr.Spec.Groups...)) {
		r.log.Info("Not approving: not a node bootstrapper's client CSR", "csr", csr.Name, "requester", csr.Spec.Username)
		return reconcile.Result{}, nil
	}
	node, err := workload.NodeClientCSRNode(csr)
	if err != nil {
		r.log.Info("Not approving node client CSR", "csr", csr.Name, "reason", err.Error())
		return reconcile.Result{}, nil
	}
	ok, err := r.authorize(ctx, csr, node)
	if err != nil || !ok {
		return reconcile.Result{RequeueAfter: approverRecheck}, err
	}
	return reconcile.Result{}, r.approve(ctx, csr, node)
}

// authorize applies the approver's rules: no Node of that name yet, a
// Machine whose InternalDNS address is the name, without a Node, created
// around the CSR.
func (r *approver) authorize(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, node string) (bool, error) {
	err := r.hosted.Get(ctx, client.ObjectKey{Name: node}, &corev1.Node{})
	switch {
	case err == nil:
		r.log.Info("Not approving: the node exists", "csr", csr.Name, "node", node)
		return false, nil
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("read node %s: %w", node, err)
	}
	m, err := r.machineWithInternalDNS(ctx, node)
	if err != nil || m == nil {
		return false, err
	}
	if m.Status.NodeRef.IsDefined() {
		r.log.Info("Not approving: the node's Machine has a node", "csr", csr.Name, "machine", m.Name)
		return false, nil
	}
	created := m.CreationTimestamp.Time
	if t := csr.CreationTimestamp.Time; !t.After(created.Add(-maxMachineClockSkew)) || !t.Before(created.Add(maxMachineDelta)) {
		r.log.Info("Not approving: the CSR is not from the Machine's time", "csr", csr.Name, "machine", m.Name)
		return false, nil
	}
	return true, nil
}

// machineWithInternalDNS is the Machine whose InternalDNS address is node
// (case aside, without a trailing dot), or nil.
func (r *approver) machineWithInternalDNS(ctx context.Context, node string) (*clusterv1.Machine, error) {
	machines := &clusterv1.MachineList{}
	if err := r.machines.List(ctx, machines, client.InNamespace(r.namespace)); err != nil {
		return nil, fmt.Errorf("list machines of %s: %w", r.namespace, err)
	}
	for i := range machines.Items {
		for _, a := range machines.Items[i].Status.Addresses {
			if a.Type == clusterv1.MachineInternalDNS && strings.EqualFold(strings.TrimSuffix(a.Address, "."), node) {
				return &machines.Items[i], nil
			}
		}
	}
	return nil, nil
}

func (r *approver) approve(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, node string) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: approveReason,
		Message: approveMessage, LastUpdateTime: metav1.Now(),
	})
	if _, err := r.certs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("approve CSR %s of node %s: %w", csr.Name, node, err)
	}
	r.log.Info("Node client CSR approved", "csr", csr.Name, "node", node)
	return nil
}
