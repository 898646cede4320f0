package workload

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/workload/cvo"
)

// Names of the singletons and namespaces of an OpenShift cluster.
const (
	// InfrastructureName is the name of the one Infrastructure.
	InfrastructureName = "cluster"
	// MachineAPINamespace holds Machines, MachineSets and BareMetalHosts.
	MachineAPINamespace = "openshift-machine-api"
)

// guestNetwork is the QEMU user-mode network lab VMs are on.
const guestNetwork = "10.0.2.0/24"

func (c *Cluster) createSingletons(ctx context.Context, cl client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: MachineAPINamespace}}
	if err := cl.Create(ctx, ns); err != nil {
		return fmt.Errorf("create namespace %s: %w", MachineAPINamespace, err)
	}
	if err := c.createInfrastructure(ctx, cl); err != nil {
		return err
	}
	return c.createClusterVersion(ctx, cl)
}

// createInfrastructure writes what the installer writes for a bare-metal
// cluster; the API VIP is the address guests reach the API server at.
func (c *Cluster) createInfrastructure(ctx context.Context, cl client.Client) error {
	infra := &configv1.Infrastructure{
		ObjectMeta: metav1.ObjectMeta{Name: InfrastructureName},
		Spec: configv1.InfrastructureSpec{
			PlatformSpec: configv1.PlatformSpec{
				Type:      configv1.BareMetalPlatformType,
				BareMetal: &configv1.BareMetalPlatformSpec{},
			},
		},
	}
	if err := cl.Create(ctx, infra); err != nil {
		return fmt.Errorf("create Infrastructure %s: %w", InfrastructureName, err)
	}
	infra.Status = c.infrastructureStatus()
	if err := cl.Status().Update(ctx, infra); err != nil {
		return fmt.Errorf("write Infrastructure %s status: %w", InfrastructureName, err)
	}
	return nil
}

func (c *Cluster) infrastructureStatus() configv1.InfrastructureStatus {
	return configv1.InfrastructureStatus{
		InfrastructureName:     c.opts.InfrastructureName,
		Platform:               configv1.BareMetalPlatformType,
		APIServerURL:           c.Server(),
		APIServerInternalURL:   c.GuestServer(),
		ControlPlaneTopology:   configv1.HighlyAvailableTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
		CPUPartitioning:        configv1.CPUPartitioningNone,
		PlatformStatus: &configv1.PlatformStatus{
			Type: configv1.BareMetalPlatformType,
			BareMetal: &configv1.BareMetalPlatformStatus{
				APIServerInternalIP:  GuestGateway,
				APIServerInternalIPs: []string{GuestGateway},
				IngressIPs:           []string{},
				MachineNetworks:      []configv1.CIDR{guestNetwork},
				LoadBalancer:         &configv1.BareMetalPlatformLoadBalancer{Type: configv1.LoadBalancerTypeOpenShiftManagedDefault},
			},
		},
	}
}

// createClusterVersion writes the spec the installer writes and the status
// the cluster-version operator reports once the install completed.
func (c *Cluster) createClusterVersion(ctx context.Context, cl client.Client) error {
	cv := &configv1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: cvo.Name},
		Spec: configv1.ClusterVersionSpec{
			ClusterID: configv1.ClusterID(c.opts.ClusterID),
			Channel:   c.opts.Channel,
		},
	}
	if err := cl.Create(ctx, cv); err != nil {
		return fmt.Errorf("create ClusterVersion %s: %w", cvo.Name, err)
	}
	cv.Status = cvo.InstalledStatus(c.opts.Release, c.opts.AvailableUpdates, time.Now())
	cv.Status.ObservedGeneration = cv.Generation
	if err := cl.Status().Update(ctx, cv); err != nil {
		return fmt.Errorf("write ClusterVersion %s status: %w", cvo.Name, err)
	}
	return nil
}
