// Package ignitionserver is the lab's stand-in for HyperShift's ignition
// server of one hosted cluster (openshift/hypershift@3ee9615,
// ignition-server/cmd/start.go): an HTTPS endpoint that hands a booting
// worker its config in exchange for the bearer token of its NodePool.
//
// What it reproduces:
//
//   - The request rules of start.go: only paths matching
//     ^/ignition[^/ ]*$ are served (else 404); Authorization must start
//     with "Bearer " (else 401) and the rest be standard base64 (else
//     401); a token no token Secret holds answers 511 "Token not found",
//     a 5xx so that Ignition backs off and retries; success is 200 with
//     Content-Type "application/json; charset=utf-8". The NodePool and
//     TargetConfigVersionHash headers take no part in authorization (the
//     NodePool header is logged, as upstream counts requests by it).
//     /healthz answers 200. TLS 1.2 at least, HTTP/1.1 only, upstream's
//     cipher suites.
//   - The CA: a self-signed CA named ignition-root-ca, kept in the
//     kubernetes.io/tls Secret ignition-server-ca-cert (keys tls.crt and
//     tls.key) in the control-plane namespace, created once and then
//     reused (control-plane-operator/.../ignitionserver/pki.go;
//     hypershift-operator/controllers/manifests/ignitionserver). Its
//     tls.crt is what the AgentCluster's ignition endpoint CA names.
//   - The tokens: Secrets token-<nodepool>-<hash> with key token, which
//     the NodePool's user data sends as Authorization: Bearer
//     base64(token) (hypershift-operator/controllers/nodepool/token.go).
//
// Where it departs from upstream:
//
//   - The payload is not the machine-config-server's output for the
//     token's release and config: it is an Ignition 3.2.0 config whose one
//     file, agentapi.UserDataFile, carries the hosted cluster's bootstrap
//     agentapi.NodeConfig (Options.Node), what cmd/lab-agent joins with.
//     Every valid token gets the same payload.
//   - No payload cache and no token controller: each request lists the
//     namespace's Secrets named token-* and compares their token key, so
//     a token Secret is honoured as soon as it exists and the node config
//     is read per request (a rotated bootstrap credential is served at
//     once). Upstream selects token Secrets by the annotation
//     hypershift.openshift.io/ignition-config, also serves a rotated
//     token's old_token until its cached payload expires, and drops
//     tokens whose expiration annotation has passed; the lab does none of
//     these.
//   - The serving certificate lives in memory, issued at Start, rather
//     than in the Secret ignition-server-serving-cert; its SANs are
//     127.0.0.1, the listen host, the advertised host and localhost.
//   - It writes no events, metrics or the token Secret's
//     hypershift.openshift.io/ignition-reached annotation.
//   - It listens on a loopback port of the host, never another address:
//     the lab's guests reach it at their QEMU user-mode gateway
//     (10.0.2.2), which QEMU forwards to the host's 127.0.0.1, so the
//     endpoint HyperShift would publish in hc.status.ignitionEndpoint is
//     <AdvertiseHost>:<port>.
//
// Neither a token nor its encoding is ever written to a log or an error
// body.
//
// It must not import anything above lab.
package ignitionserver
