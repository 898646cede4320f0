package kind

import (
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/paritylab/paritylab/lab/ports"
)

// clusterConfig builds the kind cluster config: one control-plane node and
// workers worker nodes, all running image, with the API server bound to
// loopback on a port kind picks.
func clusterConfig(name, image string, workers int) *v1alpha4.Cluster {
	cfg := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{
			Kind:       "Cluster",
			APIVersion: "kind.x-k8s.io/v1alpha4",
		},
		Name: name,
		Nodes: []v1alpha4.Node{
			{Role: v1alpha4.ControlPlaneRole, Image: image},
		},
		Networking: v1alpha4.Networking{
			IPFamily:         v1alpha4.IPv4Family,
			APIServerAddress: ports.Loopback,
		},
	}
	for range workers {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: image})
	}
	return cfg
}
