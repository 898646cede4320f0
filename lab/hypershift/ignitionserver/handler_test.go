package ignitionserver

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// The request rules of ignition-server/cmd/start.go, on a real API server:
// the path, the bearer token and its encoding, token Secrets created
// before and after Start, the NodePool header playing no part; the payload
// is the node config of the moment; no token is ever logged or echoed.
func TestIgnitionRequests(t *testing.T) {
	ns := newNamespace(t)
	early, late, unknown, decoy := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	createTokenSecret(t, ns, "token-np-1a2b3c4d", early)
	// Holds a token but is not a token Secret by name.
	createTokenSecret(t, ns, "user-data-np-1a2b3c4d", decoy)
	var node atomic.Pointer[agentapi.NodeConfig]
	first := bootstrapNode(6443)
	node.Store(&first)
	logs := &logBuffer{}
	s := start(t, Options{
		Namespace: ns, Client: k8s, Logger: logs.logger(),
		Node: func(context.Context) (agentapi.NodeConfig, error) { return *node.Load(), nil },
	})
	createTokenSecret(t, ns, "token-np-5e6f7a8b", late)
	c := httpsClient(t, s.CACertPEM(), "10.0.2.2")
	pool := "clusters/np"

	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"token Secret made before Start", "/ignition", bearer(early), http.StatusOK},
		{"token Secret made after Start", "/ignition", bearer(late), http.StatusOK},
		{"path extending /ignition", "/ignition-worker", bearer(early), http.StatusOK},
		{"MCS path", "/config/worker", bearer(early), http.StatusNotFound},
		{"path below /ignition", "/ignition/x", bearer(early), http.StatusNotFound},
		{"root", "/", bearer(early), http.StatusNotFound},
		{"no Authorization", "/ignition", "", http.StatusUnauthorized},
		{"Basic Authorization", "/ignition", "Basic " + base64.StdEncoding.EncodeToString([]byte(early)), http.StatusUnauthorized},
		{"lower-case bearer", "/ignition", "bearer " + base64.StdEncoding.EncodeToString([]byte(early)), http.StatusUnauthorized},
		{"token not base64", "/ignition", "Bearer " + early, http.StatusUnauthorized},
		{"unknown token", "/ignition", bearer(unknown), http.StatusNetworkAuthenticationRequired},
		{"token of a Secret not named token-*", "/ignition", bearer(decoy), http.StatusNetworkAuthenticationRequired},
		// HTTP drops the trailing space: "Bearer" lacks the prefix.
		{"Bearer and nothing", "/ignition", "Bearer ", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"NodePool": pool, "TargetConfigVersionHash": "1a2b3c4d"}
			if tc.auth != "" {
				h["Authorization"] = tc.auth
			}
			r := get(t, c, s, tc.path, h)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d (body %q)", r.status, tc.want, r.body)
			}
			if tc.want != http.StatusOK {
				assertNoToken(t, "body", string(r.body), early, late, unknown, decoy)
				return
			}
			if r.contentType != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", r.contentType)
			}
			if got := agentNodeConfig(t, r.body); !reflect.DeepEqual(got, first) {
				t.Errorf("node config\n%+v\nwant\n%+v", got, first)
			}
		})
	}

	t.Run("NodePool header is not checked", func(t *testing.T) {
		r := get(t, c, s, "/ignition", map[string]string{"Authorization": bearer(early), "NodePool": "clusters/another"})
		if r.status != http.StatusOK {
			t.Errorf("status %d, want 200", r.status)
		}
	})
	t.Run("node config read per request", func(t *testing.T) {
		rotated := bootstrapNode(7443)
		rotated.ClientCert = "-----BEGIN CERTIFICATE-----\nrotated\n"
		node.Store(&rotated)
		r := get(t, c, s, "/ignition", map[string]string{"Authorization": bearer(late)})
		if got := agentNodeConfig(t, r.body); !reflect.DeepEqual(got, rotated) {
			t.Errorf("after rotation the node config is\n%+v\nwant\n%+v", got, rotated)
		}
	})
	t.Run("healthz", func(t *testing.T) {
		if r := get(t, c, s, "/healthz", nil); r.status != http.StatusOK {
			t.Errorf("status %d, want 200", r.status)
		}
	})

	out := logs.String()
	assertNoToken(t, "logs", out, early, late, unknown, decoy)
	for _, want := range []string{pool, "token-np-1a2b3c4d", "token-np-5e6f7a8b", "no token Secret holds the token", "not base64"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs do not mention %q:\n%s", want, out)
		}
	}
}

// Secrets the server cannot read and a node config it cannot get answer
// 500 with a short body that, as the logs, holds no token.
func TestIgnitionServerErrors(t *testing.T) {
	ns := newNamespace(t)
	token := uuid.NewString()
	createTokenSecret(t, ns, "token-np-0", token)
	failing := interceptor.NewClient(k8s, interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("injected list failure")
		},
	})
	logs := &logBuffer{}
	noNode := func(context.Context) (agentapi.NodeConfig, error) {
		return agentapi.NodeConfig{}, errors.New("injected node failure")
	}
	unreadable := start(t, Options{Namespace: ns, Client: failing, Node: noNode, Logger: logs.logger()})
	noPayload := start(t, Options{Namespace: ns, Client: k8s, Node: noNode, Logger: logs.logger()})

	for _, tc := range []struct {
		name, wantLog string
		s             *Server
	}{
		{"token Secrets unreadable", "injected list failure", unreadable},
		{"node config unavailable", "injected node failure", noPayload},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, httpsClient(t, tc.s.CACertPEM(), "127.0.0.1"), tc.s, "/ignition", map[string]string{"Authorization": bearer(token)})
			if r.status != http.StatusInternalServerError {
				t.Fatalf("status %d, want 500 (body %q)", r.status, r.body)
			}
			if len(r.body) > 40 || strings.Contains(string(r.body), "injected") {
				t.Errorf("body %q is not a short message", r.body)
			}
			assertNoToken(t, "body", string(r.body), token)
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("logs do not say %q:\n%s", tc.wantLog, logs)
			}
		})
	}
	assertNoToken(t, "logs", logs.String(), token)
}

// assertNoToken fails if text holds a token or its base64 encoding.
func assertNoToken(t *testing.T, what, text string, tokens ...string) {
	t.Helper()
	for _, tok := range tokens {
		if strings.Contains(text, tok) || strings.Contains(text, base64.StdEncoding.EncodeToString([]byte(tok))) {
			t.Errorf("%s hold the token %s:\n%s", what, tok, text)
		}
	}
}
