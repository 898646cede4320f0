package assisted

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// servedFile is an image with its checksum.
type servedFile struct {
	path   string
	sha256 string
}

func (s *Service) fileRoutes(mux *http.ServeMux) {
	ie := agentapi.BasePath + "/infra-envs/{infraEnv}"
	// What a BMC downloads for virtual media: no header, so the token is
	// a query parameter, as in assisted-service's ISO URLs.
	mux.HandleFunc("GET /images/{infraEnv}/discovery.iso", s.queryAuthed(s.handleDiscoveryISO))
	mux.HandleFunc("HEAD /images/{infraEnv}/discovery.iso", s.queryAuthed(s.handleDiscoveryISO))
	mux.HandleFunc("GET "+ie+"/downloads/files", s.queryAuthed(s.handleFiles))
	mux.HandleFunc("GET "+ie+"/downloads/node-image", s.authed(s.handleNodeImage))
	mux.HandleFunc("GET /api/assisted-install/v2/events", s.handleEvents)
}

// queryAuthed accepts the token as ?api_key= or as a bearer header.
func (s *Service) queryAuthed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if key := r.URL.Query().Get("api_key"); key != "" {
			r.Header.Set(agentapi.AuthHeader, "Bearer "+key)
		}
		s.authed(next)(w, r)
	}
}

func (s *Service) handleDiscoveryISO(w http.ResponseWriter, r *http.Request) {
	path, err := s.discoveryImage(r.PathValue("infraEnv"))
	if err != nil {
		apiError(w, http.StatusInternalServerError, "discovery image: %v", err)
		return
	}
	serveFile(w, r, path, "application/x-iso9660-image")
}

// handleFiles serves the InfraEnv's discovery ignition, what a bootstrap
// provider hands to a host as user data.
func (s *Service) handleFiles(w http.ResponseWriter, r *http.Request) {
	if name := r.URL.Query().Get("file_name"); name != "discovery.ign" {
		apiError(w, http.StatusBadRequest, "unknown file_name %q (this service serves discovery.ign)", name)
		return
	}
	ign, err := discoveryIgnition(s.discoveryConfig(r.PathValue("infraEnv")))
	if err != nil {
		apiError(w, http.StatusInternalServerError, "discovery ignition: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(ign)
}

func (s *Service) handleNodeImage(w http.ResponseWriter, r *http.Request) {
	img, err := s.ensureNodeImage()
	if err != nil {
		apiError(w, http.StatusInternalServerError, "node image: %v", err)
		return
	}
	serveFile(w, r, img.path, "application/octet-stream")
}

func serveFile(w http.ResponseWriter, r *http.Request, path, contentType string) {
	f, err := os.Open(path)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "open image: %v", err)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		apiError(w, http.StatusInternalServerError, "stat image: %v", err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// discoveryConfig is what an InfraEnv's agents are told.
func (s *Service) discoveryConfig(infraEnvID string) agentapi.DiscoveryConfig {
	_, ironic := s.ironicAgent.Load(infraEnvID)
	cfg := agentapi.DiscoveryConfig{InfraEnvID: infraEnvID, Token: s.tokens.forInfraEnv(infraEnvID), ServicePort: s.Port(), IronicAgent: ironic}
	if m, ok := s.discoveryMirror.Load(infraEnvID); ok {
		cfg.RegistriesConf, cfg.RegistryCA = m.(*MirrorRegistry).RegistriesConf, m.(*MirrorRegistry).CABundle
	}
	return cfg
}

func (s *Service) discoveryImage(infraEnvID string) (string, error) {
	return DiscoveryImage(s.opts.Images, s.opts.Agent, s.discoveryConfig(infraEnvID))
}

// isoURL is an InfraEnv's ISO download URL (status.isoDownloadURL).
func (s *Service) isoURL(infraEnvID string) string {
	return s.URL() + "/images/" + url.PathEscape(infraEnvID) + "/discovery.iso?api_key=" + url.QueryEscape(s.tokens.forInfraEnv(infraEnvID))
}

// ignitionURL is where an InfraEnv's discovery ignition is served.
func (s *Service) ignitionURL(infraEnvID string) string {
	return s.URL() + agentapi.BasePath + "/infra-envs/" + url.PathEscape(infraEnvID) +
		"/downloads/files?file_name=discovery.ign&api_key=" + url.QueryEscape(s.tokens.forInfraEnv(infraEnvID))
}

func (s *Service) ensureNodeImage() (servedFile, error) {
	s.nodeImageOnce.Do(func() {
		path, err := NodeImage(s.opts.Images, s.opts.Agent)
		if err != nil {
			s.nodeImageErr = err
			return
		}
		sum, err := fileSHA256(path)
		s.nodeImage, s.nodeImageErr = servedFile{path: path, sha256: sum}, err
	})
	return s.nodeImage, s.nodeImageErr
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// discoveryIgnition renders a discovery config as an Ignition config that
// writes it where the discovery image looks, the way assisted-service's
// discovery ignition configures the agent of a generic live image.
func discoveryIgnition(cfg agentapi.DiscoveryConfig) ([]byte, error) {
	raw, err := json.Marshal(agentapi.UserData{Discovery: &cfg})
	if err != nil {
		return nil, err
	}
	files := []any{ignitionFile(agentapi.UserDataFile, 0o600, raw)}
	if cfg.RegistriesConf != "" {
		files = append(files, ignitionFile(agentapi.RegistriesConfPath, 0o644, []byte(cfg.RegistriesConf)),
			ignitionFile(agentapi.RegistryCAPath, 0o644, []byte(cfg.RegistryCA)))
	}
	ign := map[string]any{
		"ignition": map[string]any{"version": "3.2.0"},
		"storage":  map[string]any{"files": files},
	}
	return json.Marshal(ign)
}

// ignitionFile is an Ignition storage file with the given contents,
// replacing what is there.
func ignitionFile(path string, mode int, contents []byte) map[string]any {
	return map[string]any{
		"path":      path,
		"mode":      mode,
		"overwrite": true,
		"contents":  map[string]any{"source": "data:," + url.PathEscape(string(contents))},
	}
}

func (s *Service) handleEvents(w http.ResponseWriter, r *http.Request) {
	ns, name := r.URL.Query().Get("namespace"), r.URL.Query().Get("name")
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	writeJSON(w, http.StatusOK, s.events.list(strings.TrimSpace(ns), strings.TrimSpace(name), limit))
}
