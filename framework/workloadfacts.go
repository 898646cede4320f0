package framework

import (
	"context"
	"errors"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WorkloadFacts are what an installed cluster reports about itself.
type WorkloadFacts struct {
	// InfrastructureName is the Infrastructure's status.infrastructureName
	// (OpenShift's infrastructure ID).
	InfrastructureName string
	// OpenShiftVersion is the ClusterVersion's status.desired.version.
	OpenShiftVersion string
	// KubernetesVersion is the API server's version.
	KubernetesVersion string
}

// ReadWorkloadFacts reads the facts of a workload cluster; a fact it cannot
// read is left empty and its error joined to the returned one.
func ReadWorkloadFacts(ctx context.Context, c client.Client, cfg *rest.Config) (WorkloadFacts, error) {
	var facts WorkloadFacts
	var errs []error
	infra := &configv1.Infrastructure{}
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, infra); err != nil {
		errs = append(errs, fmt.Errorf("read Infrastructure: %w", err))
	} else {
		facts.InfrastructureName = infra.Status.InfrastructureName
	}
	cv := &configv1.ClusterVersion{}
	if err := c.Get(ctx, client.ObjectKey{Name: "version"}, cv); err != nil {
		errs = append(errs, fmt.Errorf("read ClusterVersion: %w", err))
	} else {
		facts.OpenShiftVersion = cv.Status.Desired.Version
	}
	if cfg != nil {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err == nil {
			var v fmt.Stringer
			if v, err = dc.ServerVersion(); err == nil {
				facts.KubernetesVersion = v.String()
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("read server version: %w", err))
		}
	}
	if len(errs) > 0 {
		return facts, fmt.Errorf("workload cluster facts: %w", errors.Join(errs...))
	}
	return facts, nil
}
