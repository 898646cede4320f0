package mapi

import (
	"context"
	"encoding/json"
	"fmt"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/workload"
)

// Names the installer gives the machine API's objects of a bare-metal
// cluster.
const (
	// WorkerUserDataSecret holds the user data every worker boots with.
	WorkerUserDataSecret = "worker-user-data"
	// Labels of Machines and MachineSets.
	ClusterLabel    = "machine.openshift.io/cluster-api-cluster"
	MachineSetLabel = "machine.openshift.io/cluster-api-machineset"
	RoleLabel       = "machine.openshift.io/cluster-api-machine-role"
	TypeLabel       = "machine.openshift.io/cluster-api-machine-type"
	// bootstrapperBinding lets bootstrapping kubelets create CSRs.
	bootstrapperBinding = "machine-api-node-bootstrapper"
)

// WorkerMachineSetName is the installer's name of the worker MachineSet.
func WorkerMachineSetName(infra string) string { return infra + "-worker-0" }

// install writes what the installer leaves for the machine API: the
// bootstrappers' RBAC, the shared worker user data, the installed hosts'
// BareMetalHosts, the control-plane Machines, and a worker MachineSet
// whose replicas count the installed workers (zero without). Existing
// objects are kept. It runs before the controllers start, as the
// installer's manifests exist before machine-api-operator runs.
func install(ctx context.Context, c client.Client, opts Options, img *imageServer) error {
	masters, workers := hostObjects{opts: opts, img: img}.day1(opts.Installed)
	if err := createLinked(ctx, c, masters); err != nil {
		return err
	}
	for _, h := range workers {
		if err := createOrKeep(ctx, c, h); err != nil {
			return err
		}
	}
	for _, obj := range installObjects(opts, img) {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

func installObjects(opts Options, img *imageServer) []client.Object {
	ud, _ := json.Marshal(agentapi.UserData{Node: &opts.WorkerNodeConfig}) // plain structs: cannot fail
	return []client.Object{
		bootstrapperRBAC(),
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: WorkerUserDataSecret, Namespace: opts.Namespace},
			Data:       map[string][]byte{"userData": ud, "disableTemplating": []byte("true")},
		},
		workerMachineSet(opts, img, installedWorkers(opts.Installed)),
	}
}

// bootstrapperRBAC lets bootstrapping kubelets create and read CSRs.
func bootstrapperRBAC() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapperBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: workload.BootstrapGroup}},
	}
}

func workerMachineSet(opts Options, img *imageServer, replicas int32) *machinev1beta1.MachineSet {
	name := WorkerMachineSetName(opts.InfrastructureName)
	sel := map[string]string{ClusterLabel: opts.InfrastructureName, MachineSetLabel: name}
	tmpl := map[string]string{ClusterLabel: opts.InfrastructureName, MachineSetLabel: name, RoleLabel: "worker", TypeLabel: "worker"}
	ps, _ := RawProviderSpec(BareMetalMachineProviderSpec{ // plain structs: cannot fail
		Image:    Image{URL: img.url(), Checksum: img.checksum},
		UserData: &corev1.SecretReference{Name: WorkerUserDataSecret},
	})
	return &machinev1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: opts.Namespace, Labels: map[string]string{ClusterLabel: opts.InfrastructureName}},
		Spec: machinev1beta1.MachineSetSpec{
			Replicas: ptr.To(replicas),
			Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: machinev1beta1.MachineTemplateSpec{
				ObjectMeta: machinev1beta1.ObjectMeta{Labels: tmpl},
				Spec: machinev1beta1.MachineSpec{
					// NodeRestriction forbids a kubelet to give itself a
					// role; the nodelink controller copies this to the Node.
					ObjectMeta:   machinev1beta1.ObjectMeta{Labels: map[string]string{"node-role.kubernetes.io/worker": ""}},
					ProviderSpec: *ps,
				},
			},
		},
	}
}
