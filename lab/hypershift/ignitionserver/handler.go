package ignitionserver

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// ignitionPath is the only path served (ignition-server/cmd/start.go L46).
var ignitionPath = regexp.MustCompile(`^/ignition[^/ ]*$`)

// Token Secrets are token-<nodepool>-<hash> with the token under key
// "token" (hypershift-operator/controllers/nodepool/token.go L40,
// L287-296).
const (
	TokenSecretPrefix = "token-"
	TokenKey          = "token"
)

// handler serves the Ignition payload to the holders of a token.
type handler struct {
	namespace string
	client    client.Client
	node      func(context.Context) (agentapi.NodeConfig, error)
	log       logr.Logger
}

func newHandler(opts Options, log logr.Logger) http.Handler {
	mux := http.NewServeMux()
	// start.go L286: 200 with an empty body.
	mux.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
	mux.Handle("/", &handler{namespace: opts.Namespace, client: opts.Client, node: opts.Node, log: log})
	return mux
}

// ServeHTTP follows start.go L219-271. Only the path and the NodePool
// header are logged: Authorization carries the token.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := h.log.WithValues("path", r.URL.Path, "nodePool", r.Header.Get("NodePool"))
	// L226-231: any other path is not found.
	if !ignitionPath.MatchString(r.URL.Path) {
		log.V(1).Info("Ignition request for an unknown path")
		http.NotFound(w, r)
		return
	}
	token, err := bearerToken(r.Header.Get("Authorization"))
	if err != nil {
		refuse(w, log, http.StatusUnauthorized, "Unauthorized", err)
		return
	}
	secret, err := h.tokenSecret(r.Context(), token)
	if err != nil {
		refuse(w, log, http.StatusInternalServerError, "Failed to look up the token", err)
		return
	}
	if secret == "" {
		// L252-261: a 5xx, so that Ignition backs off and retries, in
		// case the request comes before the token is known.
		refuse(w, log, http.StatusNetworkAuthenticationRequired, "Token not found", errTokenNotFound)
		return
	}
	body, err := h.payload(r.Context())
	if err != nil {
		// L263-267 answer 500 for a payload they cannot serve.
		refuse(w, log, http.StatusInternalServerError, "Invalid ignition payload", err)
		return
	}
	// L269-271.
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	log.Info("Served ignition", "tokenSecret", secret)
}

var errTokenNotFound = errors.New("no token Secret holds the token")

// refuse answers status with a short body; why goes to the log only, and
// never holds the token.
func refuse(w http.ResponseWriter, log logr.Logger, status int, body string, why error) {
	if status == http.StatusInternalServerError {
		log.Error(why, "Ignition request failed", "status", status)
	} else {
		log.Info("Refused ignition request", "status", status, "reason", why.Error())
	}
	http.Error(w, body, status)
}

// bearerToken decodes "Bearer base64(token)" (start.go L234-250): the
// prefix is case-sensitive and the encoding standard base64. Its errors
// say why without the header's value (a base64 error would quote it).
func bearerToken(auth string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return nil, errors.New("authorization is not a bearer token")
	}
	token, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, errors.New("bearer token is not base64")
	}
	return token, nil
}

// tokenSecret names the token Secret that holds token, or "" when none
// does. It reads the Secrets at every request: there is no payload cache.
func (h *handler) tokenSecret(ctx context.Context, token []byte) (string, error) {
	if len(token) == 0 {
		return "", nil
	}
	var secrets corev1.SecretList
	if err := h.client.List(ctx, &secrets, client.InNamespace(h.namespace)); err != nil {
		return "", fmt.Errorf("list token Secrets in %s: %w", h.namespace, err)
	}
	for _, s := range secrets.Items {
		held, ok := s.Data[TokenKey]
		if ok && strings.HasPrefix(s.Name, TokenSecretPrefix) && subtle.ConstantTimeCompare(held, token) == 1 {
			return s.Name, nil
		}
	}
	return "", nil
}

func (h *handler) payload(ctx context.Context) ([]byte, error) {
	node, err := h.node(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the bootstrap node config: %w", err)
	}
	return renderPayload(node)
}
