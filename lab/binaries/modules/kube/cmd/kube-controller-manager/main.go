// Command kube-controller-manager is the upstream controller manager, built
// from the k8s.io/kubernetes module; workload clusters use it for node
// lifecycle (NotReady and unreachable taints when a lab VM stops).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
