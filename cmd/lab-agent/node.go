package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Like a kubelet's defaults: status and lease every 10s, lease valid 40s.
const (
	heartbeat     = 10 * time.Second
	leaseDuration = 40
)

// node plays the kubelet of an installed host: it registers its Node and
// keeps the Node's Ready condition and its Lease fresh, authenticated as
// system:node:<name>.
type node struct {
	sys  *system
	cfg  agentapi.NodeConfig
	base string
	http *http.Client
	// kubelet is the kubelet version the node reports: the configured
	// one, then the one its Node's DesiredKubeletAnnotation names. mu
	// guards it: the heartbeat and the Node watch both use it.
	mu      sync.Mutex
	kubelet string
}

func runNode(ctx context.Context, sys *system, cfg agentapi.NodeConfig) error {
	n, err := newNode(sys, cfg)
	if err != nil {
		return err
	}
	// A host that boots again after its install (a power cycle) is
	// refused its reports: it reports no further stage then.
	reporting := n.reportStage(ctx, agentv1beta1.HostStageConfiguring)
	for !n.register(ctx) {
		if !sleep(ctx, 3*time.Second) {
			return ctx.Err()
		}
	}
	if reporting {
		n.reportStage(ctx, agentv1beta1.HostStageJoined)
	}
	if cfg.BootstrappedFrom != "" && !cfg.ReadyBeforeProviderID {
		n.waitForProviderID(ctx)
	}
	reportedDone := !reporting
	go n.followDesiredKubelet(ctx)
	for {
		ok := n.heartbeat(ctx)
		if ok && !reportedDone {
			n.reportStage(ctx, agentv1beta1.HostStageDone)
			reportedDone = true
		}
		if !sleep(ctx, heartbeat) {
			return ctx.Err()
		}
	}
}

func newNode(sys *system, cfg agentapi.NodeConfig) (*node, error) {
	host, err := sys.serviceHost(cfg.APIHost)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(cfg.CACert)) {
		return nil, errors.New("node config: no CA certificate")
	}
	cert, err := tls.X509KeyPair([]byte(cfg.ClientCert), []byte(cfg.ClientKey))
	if err != nil {
		return nil, fmt.Errorf("node config: client certificate: %w", err)
	}
	tlsCfg := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: cfg.TLSServerName, MinVersion: tls.VersionTLS12}
	return &node{
		sys: sys, cfg: cfg, kubelet: cfg.KubeletVersion,
		base: "https://" + net.JoinHostPort(host, strconv.Itoa(cfg.APIPort)),
		http: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}},
	}, nil
}

// waitForProviderID keeps a machine API worker's Node not Ready until the
// actuator wrote its providerID and a little longer, as a real worker
// stays NotReady far longer (network, machine config) than that takes:
// MAO's nodelink sets a Machine's nodeRef when the Node's readiness
// changes, so a Node must not turn Ready before it can be linked. And
// nodelink tells the Machine's watchers of the later change to Ready by
// bumping status.lastUpdated, a time of one-second resolution: a Node that
// turned Ready within the second it was linked left the Machine unchanged,
// and MAO's MachineSet never counted it ready. It gives up after 3
// minutes.
// readyAfterProviderID is how long a worker stays NotReady after its
// providerID is written: what is left of its setup, seconds where a real
// one takes minutes.
const readyAfterProviderID = 5 * time.Second

func (n *node) waitForProviderID(ctx context.Context) {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		var nd corev1.Node
		if _, err := n.call(ctx, http.MethodGet, "/api/v1/nodes/"+n.cfg.Name, "", nil, &nd); err == nil && nd.Spec.ProviderID != "" {
			log.Printf("node %s: providerID %s", n.cfg.Name, nd.Spec.ProviderID)
			sleep(ctx, readyAfterProviderID)
			return
		}
		if !sleep(ctx, 2*time.Second) {
			return
		}
	}
	log.Printf("node %s: no providerID after 3m; reporting Ready anyway", n.cfg.Name)
}

// register creates the Node; an existing one (a restart) is fine.
func (n *node) register(ctx context.Context) bool {
	code, err := n.call(ctx, http.MethodPost, "/api/v1/nodes", "application/json", n.nodeObject(), nil)
	if err == nil || code == http.StatusConflict {
		log.Printf("node %s registered", n.cfg.Name)
		return true
	}
	log.Printf("register node: %v", err)
	return false
}

func (n *node) nodeObject() *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": n.cfg.Name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
	}
	for k, v := range n.cfg.Labels {
		labels[k] = v
	}
	nd := &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: n.cfg.Name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: n.cfg.ProviderID},
	}
	for _, t := range n.cfg.Taints {
		nd.Spec.Taints = append(nd.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return nd
}

// heartbeat patches the Node's status and renews its Lease. A Node that
// asks for another kubelet version gets it reported at once (should the
// watch have missed it).
func (n *node) heartbeat(ctx context.Context) bool {
	nd, err := n.patchStatus(ctx)
	if err == nil && n.takeDesiredKubelet(nd) {
		_, err = n.patchStatus(ctx)
	}
	if err != nil {
		log.Printf("node status: %v", err)
		return false
	}
	if err := n.renewLease(ctx); err != nil {
		log.Printf("node lease: %v", err)
		return false
	}
	return true
}

func (n *node) patchStatus(ctx context.Context) (*corev1.Node, error) {
	nd := &corev1.Node{}
	status := map[string]any{"status": n.status()}
	_, err := n.call(ctx, http.MethodPatch, "/api/v1/nodes/"+n.cfg.Name+"/status", "application/strategic-merge-patch+json", status, nd)
	return nd, err
}

func (n *node) status() corev1.NodeStatus {
	now := metav1.NewTime(time.Now().UTC())
	inv := n.sys.inventory()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(inv.CPU.Count, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(inv.Memory.UsableBytes, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(250, resource.DecimalSI),
	}
	st := corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "lab node agent is posting ready status"),
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", ""),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", ""),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", ""),
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: n.cfg.Name}},
		NodeInfo:  n.nodeInfo(),
	}
	if ip := n.sys.primaryIPv4(); ip != "" {
		st.Addresses = append([]corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}, st.Addresses...)
	}
	return st
}

func (n *node) nodeInfo() corev1.NodeSystemInfo {
	var uts syscall.Utsname
	_ = syscall.Uname(&uts)
	return corev1.NodeSystemInfo{
		MachineID: strings.ReplaceAll(n.sys.hostID(), "-", ""), SystemUUID: n.sys.hostID(),
		BootID: n.sys.read("proc/sys/kernel/random/boot_id"), KernelVersion: utsString(uts.Release[:]),
		OSImage: "paritylab lab node", ContainerRuntimeVersion: "none://0", KubeletVersion: n.kubeletVersion(),
		OperatingSystem: "linux", Architecture: "amd64",
	}
}

func utsString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

func (n *node) renewLease(ctx context.Context) error {
	path := "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + n.cfg.Name
	now := metav1.NewMicroTime(time.Now().UTC())
	var lease coordinationv1.Lease
	code, err := n.call(ctx, http.MethodGet, path, "", nil, &lease)
	if code == http.StatusNotFound {
		lease = coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Name: n.cfg.Name, Namespace: "kube-node-lease"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &n.cfg.Name, LeaseDurationSeconds: int32Ptr(leaseDuration), RenewTime: &now},
		}
		_, err = n.call(ctx, http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", "application/json", &lease, nil)
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = n.call(ctx, http.MethodPut, path, "application/json", &lease, nil)
	return err
}

func int32Ptr(v int32) *int32 { return &v }

// call sends a request to the API server and decodes the answer; it
// returns the status code even on errors.
func (n *node) call(ctx context.Context, method, path, contentType string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, n.base+path, body)
	if err != nil {
		return 0, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := n.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(raw)))
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(raw, out)
	}
	return resp.StatusCode, nil
}

// reportStage tells the assisted service how the install ends, as the
// assisted-installer controller does from the installed cluster. It says
// whether the service may take further stages: false once it refused one
// (409: the host is done installing, and booted again).
func (n *node) reportStage(ctx context.Context, stage agentv1beta1.HostStage) bool {
	r := n.cfg.Report
	if r == nil {
		return false
	}
	host, err := n.sys.serviceHost(r.ServiceHost)
	if err != nil {
		log.Printf("report %s: %v", stage, err)
		return true
	}
	c := newClient(host, r.ServicePort, r.Token)
	for attempt := 0; attempt < 10; attempt++ {
		err := c.progress(ctx, r.InfraEnvID, r.HostID, string(stage), "")
		var apiErr *agentapi.APIError
		switch {
		case err == nil:
			return true
		case errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict:
			log.Printf("report %s: refused, no further stages: %v", stage, err)
			return false
		case attempt == 9:
			log.Printf("report %s: %v", stage, err)
		}
		if !sleep(ctx, 2*time.Second) {
			return true
		}
	}
	return true
}
