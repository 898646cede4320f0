package apiproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"sigs.k8s.io/yaml"
)

// Options configure a proxy.
type Options struct {
	// Upstream is the hub's API server. Required.
	Upstream *url.URL
	// Transport carries requests to it with the lab's credentials
	// (rest.TransportFor of the hub's config): the enhancement's sidecar
	// carries its pod's own, which the lab's in-process clients do not
	// have. Required.
	Transport http.RoundTripper
	// Logger receives refused requests and failed translations.
	Logger logr.Logger
}

// maxBody bounds a body the proxy reads whole to translate it.
const maxBody = 64 << 20

// NewHandler returns the proxy: requests translated to the private groups
// and sent upstream, responses translated back, watch streams event by
// event. The hub is asked for JSON only (protobuf and CBOR cannot be
// rewritten) and for legacy discovery; a request body in another format
// is refused with 415.
func NewHandler(opts Options) (http.Handler, error) {
	if opts.Upstream == nil || opts.Transport == nil {
		return nil, errors.New("api proxy: Options.Upstream and Options.Transport are required")
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(opts.Upstream)
			pr.Out.URL.Path, pr.Out.URL.RawPath = Path(pr.In.URL.Path, ToPrivate), ""
			pr.Out.Header.Set("Accept", jsonAccept(pr.In.Header.Get("Accept")))
			// The outgoing transport then asks for gzip itself and
			// inflates the answer, which the proxy must read to
			// translate; its own clients get it uncompressed.
			pr.Out.Header.Del("Accept-Encoding")
		},
		Transport:      opts.Transport,
		ModifyResponse: translateResponse,
		FlushInterval:  -1, // watch events go out as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			opts.Logger.Error(err, "Proxy request", "method", r.Method, "path", r.URL.Path)
			writeStatus(w, http.StatusBadGateway, "BadGateway", "the API proxy could not reach the hub: "+err.Error())
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := translateRequestBody(r); err != nil {
			opts.Logger.Info("Refused request", "method", r.Method, "path", r.URL.Path, "reason", err.Error())
			writeStatus(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", err.Error())
			return
		}
		rp.ServeHTTP(w, r)
	}), nil
}

// jsonAccept keeps the JSON media ranges of a client's Accept header,
// with their parameters (a metadata-only informer asks for
// as=PartialObjectMetadataList, kubectl for tables), and drops those the
// proxy cannot translate: protobuf, CBOR and aggregated discovery
// (g=apidiscovery.k8s.io), which the client then reads in its legacy form.
func jsonAccept(accept string) string {
	var kept []string
	for _, r := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil || !isJSON(mt) || params["g"] == "apidiscovery.k8s.io" {
			continue
		}
		kept = append(kept, strings.TrimSpace(r))
	}
	if len(kept) == 0 {
		return "application/json"
	}
	return strings.Join(kept, ", ")
}

// translateRequestBody rewrites a request's body to the private groups.
// JSON bodies (objects and patches) and server-side apply's YAML (sent as
// JSON) are translated; a body in another format is an error.
func translateRequestBody(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	_ = r.Body.Close()
	if err != nil {
		return fmt.Errorf("read the request body: %w", err)
	}
	if len(raw) > 0 {
		ct := mediaType(r.Header.Get("Content-Type"))
		switch {
		case ct == "application/apply-patch+yaml":
			if raw, err = yaml.YAMLToJSON(raw); err != nil {
				return fmt.Errorf("the apply patch is not YAML: %w", err)
			}
		case !isJSON(ct):
			return fmt.Errorf("the API proxy translates JSON bodies only, not %q: send JSON", ct)
		}
		translate := Body
		if ct == "application/json-patch+json" {
			translate = JSONPatch
		}
		if raw, err = translate(raw, ToPrivate); err != nil {
			return err
		}
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	return nil
}

// translateResponse rewrites a JSON response to the standard groups: a
// watch stream event by event, any other body whole.
func translateResponse(resp *http.Response) error {
	if !isJSON(mediaType(resp.Header.Get("Content-Type"))) {
		return nil
	}
	if isWatch(resp.Request) {
		resp.Body = watchStream(resp.Body)
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read the hub's response: %w", err)
	}
	if raw, err = Body(raw, ToStandard); err != nil {
		return err
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	resp.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	return nil
}

// watchStream translates a stream of watch events as they arrive.
func watchStream(in io.ReadCloser) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer in.Close()
		dec := json.NewDecoder(in)
		for {
			var event json.RawMessage
			if err := dec.Decode(&event); err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				_ = pw.CloseWithError(err)
				return
			}
			out, err := Body(event, ToStandard)
			if err == nil {
				_, err = pw.Write(append(out, '\n'))
			}
			if err != nil {
				_ = pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

func isWatch(r *http.Request) bool {
	if r == nil {
		return false
	}
	w := r.URL.Query().Get("watch")
	return w == "true" || w == "1" || strings.Contains(r.URL.Path, "/watch/")
}

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

// isJSON says whether a media type is JSON: objects, the three patch
// types, and JSON with a suffix.
func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// writeStatus answers with a Kubernetes Status, as the API server would.
func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": msg,
	})
}
