package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/results"
)

// Cluster is a workload cluster a flow installed and left running, so
// that later scenarios (day-2) start from it instead of installing again.
type Cluster struct {
	Flow results.Flow
	// Namespace on the hub holds the flow's manifests and hosts; Name is
	// the cluster's name there.
	Namespace, Name string
	// Workload reaches the cluster itself.
	Workload       client.Client
	WorkloadConfig *rest.Config
	// Site is the CAPI flow's manifests (nil for the MAPI flow).
	Site *CAPISite
	// ZTP is the MAPI flow's manifests (nil for the CAPI flow).
	ZTP *ZTPSite
}

// Clusters keeps the clusters of a suite run by flow.
type Clusters struct {
	mu sync.Mutex
	m  map[results.Flow]*Cluster
}

// Put records the cluster a flow installed.
func (c *Clusters) Put(cl *Cluster) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[results.Flow]*Cluster{}
	}
	c.m[cl.Flow] = cl
}

// Get returns the cluster of a flow, or nil.
func (c *Clusters) Get(flow results.Flow) *Cluster {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[flow]
}

// KubeconfigUsable tells whether a kubeconfig reaches its cluster: a
// client made from it lists the cluster's Nodes.
func KubeconfigUsable(ctx context.Context, kubeconfig []byte, scheme *runtime.Scheme) error {
	if len(kubeconfig) == 0 {
		return errors.New("the kubeconfig is empty")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return fmt.Errorf("read kubeconfig: %w", err)
	}
	cfg.Timeout = 10 * time.Second
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("client from kubeconfig: %w", err)
	}
	if err := c.List(ctx, &corev1.NodeList{}); err != nil {
		return fmt.Errorf("list Nodes with the kubeconfig: %w", err)
	}
	return nil
}
