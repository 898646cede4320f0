package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/process"
)

// serviceCIDR is the virtual range Services get addresses from. Nothing is
// routed to it: it exists only inside the API server.
const serviceCIDR = "10.0.0.0/24"

func (cp *ControlPlane) startEtcd(ctx context.Context) (string, error) {
	bin, err := binaries.Path(binaries.Etcd)
	if err != nil {
		return "", err
	}
	var url string
	err = cp.onFreePort(func(port int) error {
		url = "http://" + ports.Loopback + ":" + strconv.Itoa(port)
		return cp.run(ctx, process.Spec{
			Name: "etcd",
			Path: bin,
			Args: []string{
				"--data-dir=" + filepath.Join(cp.opts.Dir, "etcd"),
				"--listen-client-urls=" + url,
				"--advertise-client-urls=" + url,
				// Port 0: the peer port is never used by a one-member cluster,
				// and a fixed 2380 would clash between control planes.
				"--listen-peer-urls=http://" + ports.Loopback + ":0",
				// Lab data is thrown away with the run; fsync only slows it.
				"--unsafe-no-fsync=true",
				"--log-level=warn",
			},
			Ready: process.HTTPReady(http.DefaultClient, url+"/health", `"health":"true"`),
		})
	})
	return url, err
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, etcdURL string) error {
	bin, err := binaries.Path(binaries.KubeAPIServer)
	if err != nil {
		return err
	}
	return cp.onFreePort(func(port int) error {
		cp.server = "https://" + ports.Loopback + ":" + strconv.Itoa(port)
		if err := cp.writeAdminKubeconfig(); err != nil {
			return err
		}
		client, err := rest.HTTPClientFor(cp.restConfig)
		if err != nil {
			return fmt.Errorf("build API server health client: %w", err)
		}
		args := cp.apiServerArgs(port, etcdURL)
		if len(cp.opts.AuditedResources) > 0 {
			policy, err := cp.writeAuditPolicy()
			if err != nil {
				return err
			}
			args = append(args, cp.auditArgs(policy)...)
		}
		return cp.run(ctx, process.Spec{
			Name:  "kube-apiserver",
			Path:  bin,
			Args:  args,
			Ready: process.HTTPReady(client, cp.server+"/readyz", "ok"),
		})
	})
}

func (cp *ControlPlane) apiServerArgs(port int, etcdURL string) []string {
	f := cp.files
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + ports.Loopback,
		"--advertise-address=" + ports.Loopback,
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + f.dir,
		"--tls-cert-file=" + f.servingCert(),
		"--tls-private-key-file=" + f.servingKey(),
		"--client-ca-file=" + f.caCert(),
		"--authorization-mode=" + strings.Join(cp.opts.AuthorizationModes, ","),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + f.saPub(),
		"--service-account-signing-key-file=" + f.saKey(),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--allow-privileged=true",
		// No controller creates the default ServiceAccount of a namespace
		// in a lab cluster without one; the plugin would reject every Pod.
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
		// The "kubernetes" Service cannot point at a loopback address; the
		// lab has no in-cluster clients that would use it.
		"--endpoint-reconciler-type=none",
	}
	if len(cp.opts.AdmissionPlugins) > 0 {
		args = append(args, "--enable-admission-plugins="+strings.Join(cp.opts.AdmissionPlugins, ","))
	}
	return args
}

func (cp *ControlPlane) writeAdminKubeconfig() error {
	raw, err := kubeconfigFor(cp.opts.Name, cp.server, cp.creds.ca, cp.creds.admin)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(cp.KubeconfigPath(), raw); err != nil {
		return err
	}
	cfg, err := restConfigFrom(raw)
	if err != nil {
		return err
	}
	cp.kubeconfig, cp.restConfig = raw, cfg
	return nil
}

func (cp *ControlPlane) startControllerManager(ctx context.Context) error {
	bin, err := binaries.Path(binaries.KubeControllerManager)
	if err != nil {
		return err
	}
	kubeconfig, err := cp.componentKubeconfig("kube-controller-manager", "system:kube-controller-manager")
	if err != nil {
		return err
	}
	return cp.onFreePort(func(port int) error {
		return cp.runControllerManager(ctx, bin, kubeconfig, port)
	})
}

func (cp *ControlPlane) runControllerManager(ctx context.Context, bin, kubeconfig string, port int) error {
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=" + ports.Loopback,
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(cp.opts.Dir, "kcm-serving"),
		"--controllers=" + strings.Join(cp.controllers(), ","),
		"--service-account-private-key-file=" + cp.files.saKey(),
		"--root-ca-file=" + cp.files.caCert(),
		// Each controller then acts as its own service account, which the
		// API server's bootstrap RBAC policy grants exactly its rights.
		"--use-service-account-credentials=true",
		// The lab API server has no front proxy; looking its CA up only
		// fills the log with errors.
		"--authentication-skip-lookup=true",
		"--leader-elect=false",
		"--profiling=false",
	}
	if cp.opts.CSRSigning {
		if err := writeCAKey(cp.files, cp.creds.ca); err != nil {
			return err
		}
		args = append(args, "--cluster-signing-cert-file="+cp.files.caCert(), "--cluster-signing-key-file="+cp.files.caKey())
	}
	if g := cp.opts.NodeMonitorGracePeriod; g > 0 {
		args = append(args, "--node-monitor-grace-period="+g.String())
	}
	insecure := &http.Client{Transport: &http.Transport{
		// The controller manager serves /healthz with a certificate it
		// makes itself at start; only liveness is checked, over loopback.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}
	return cp.run(ctx, process.Spec{
		Name:  "kube-controller-manager",
		Path:  bin,
		Args:  args,
		Ready: process.HTTPReady(insecure, "https://"+ports.Loopback+":"+strconv.Itoa(port)+"/healthz", "ok"),
	})
}

// portAttempts bounds how often a component is started again on a new
// port after another process took the one picked for it between the pick
// and the bind (lab/ports: a component that fails to bind picks again).
const portAttempts = 3

// onFreePort starts a component on a freshly picked port, and again on a
// new one when it could not bind the one it got.
func (cp *ControlPlane) onFreePort(start func(port int) error) error {
	var err error
	for range portAttempts {
		port, perr := cp.opts.pickPort()
		if perr != nil {
			return perr
		}
		if err = start(port); err == nil || !portTaken(err) {
			return err
		}
		cp.opts.Logger.Info("Port taken before the component bound it; picking another", "port", port)
	}
	return err
}

// portTaken says a component failed to start because its port was taken.
func portTaken(err error) bool {
	var se *process.StartError
	return errors.As(err, &se) && strings.Contains(se.LogTail, "address already in use")
}

// controllers is the --controllers list: the configured ones, plus the
// CSR signer when asked for. The CSR approver is left out on purpose: as
// in OpenShift, something that knows the machines approves.
func (cp *ControlPlane) controllers() []string {
	list := cp.opts.Controllers
	if cp.opts.CSRSigning && !slices.Contains(list, "csrsigning") {
		list = append(slices.Clip(list), "csrsigning")
	}
	return list
}

// componentKubeconfig writes a kubeconfig for a control-plane component
// authenticating as user (whose bootstrap RBAC roles the API server makes).
func (cp *ControlPlane) componentKubeconfig(name, user string) (string, error) {
	cert, err := cp.creds.ca.ClientCert(user)
	if err != nil {
		return "", err
	}
	raw, err := kubeconfigFor(name, cp.server, cp.creds.ca, cert)
	if err != nil {
		return "", err
	}
	path := cp.files.path(name + ".kubeconfig")
	return path, writeKubeconfig(path, raw)
}
