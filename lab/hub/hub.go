package hub

import (
	"context"

	"k8s.io/client-go/rest"
)

// Hub is a management cluster.
type Hub interface {
	// Backend names the implementation ("local", "kind"); the lab records
	// it among the components it runs, which observations are tagged with.
	Backend() string
	// Create brings the hub up and returns once its API server is ready.
	Create(ctx context.Context) error
	// RESTConfig returns admin credentials; valid after Create.
	RESTConfig() *rest.Config
	// Kubeconfig returns an admin kubeconfig; valid after Create.
	Kubeconfig() ([]byte, error)
	// WebhookHost is the address at which the hub's API server reaches
	// webhook servers of this process, or "" when it cannot (the kind
	// backend, whose providers run inside the cluster).
	WebhookHost() string
	// Dispose removes the hub and everything Create made. It is safe to
	// call twice and after a failed Create.
	Dispose(ctx context.Context) error
}
