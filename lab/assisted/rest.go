package assisted

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// maxBody bounds every request body; an inventory is a few KiB.
const maxBody = 1 << 20

// routes of the agent API. Go 1.22 patterns carry the path parameters.
func (s *Service) routes(mux *http.ServeMux) {
	base := agentapi.BasePath + "/infra-envs/{infraEnv}/hosts"
	mux.HandleFunc("POST "+base, s.authed(s.handleRegister))
	mux.HandleFunc("GET "+base+"/{host}/instructions", s.authed(s.hosted(s.handleInstructions)))
	mux.HandleFunc("POST "+base+"/{host}/instructions", s.authed(s.hosted(s.handleStepReply)))
	mux.HandleFunc("PUT "+base+"/{host}/progress", s.authed(s.hosted(s.handleProgress)))
}

// apiError answers with the agent API's error body.
func apiError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(agentapi.APIError{Code: code, Reason: fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// authed checks the bearer token against the InfraEnv in the path.
func (s *Service) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		infraEnv := r.PathValue("infraEnv")
		token, ok := strings.CutPrefix(r.Header.Get(agentapi.AuthHeader), "Bearer ")
		if !ok || token == "" {
			apiError(w, http.StatusUnauthorized, "missing bearer token: agents authenticate with their InfraEnv's token")
			return
		}
		if !s.tokens.valid(infraEnv, token) {
			apiError(w, http.StatusUnauthorized, "token is not valid for InfraEnv %q", infraEnv)
			return
		}
		next(w, r)
	}
}

// hosted checks that the host in the path registered with that InfraEnv.
func (s *Service) hosted(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.registry.known(r.PathValue("host"), r.PathValue("infraEnv")) {
			apiError(w, http.StatusNotFound, "host %q is not registered with InfraEnv %q; register first", r.PathValue("host"), r.PathValue("infraEnv"))
			return
		}
		next(w, r)
	}
}

// decode reads a bounded JSON body, refusing unknown fields.
func decode(w http.ResponseWriter, r *http.Request, into any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			apiError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes", maxBody)
			return false
		}
		apiError(w, http.StatusBadRequest, "malformed JSON body: %v", err)
		return false
	}
	if dec.More() {
		apiError(w, http.StatusBadRequest, "malformed JSON body: more than one value")
		return false
	}
	return true
}

func (s *Service) handleRegister(w http.ResponseWriter, r *http.Request) {
	var req agentapi.RegisterRequest
	if !decode(w, r, &req) {
		return
	}
	id, err := uuid.Parse(req.HostID)
	if err != nil {
		apiError(w, http.StatusBadRequest, "host_id %q is not a UUID (agents register with the SMBIOS system UUID)", req.HostID)
		return
	}
	hostID := id.String()
	ie, err := s.infraEnvByID(r.Context(), r.PathValue("infraEnv"))
	if err != nil {
		apiError(w, http.StatusNotFound, "InfraEnv %q: %v", r.PathValue("infraEnv"), err)
		return
	}
	if err := s.ensureAgent(r.Context(), ie, hostID, req.DiscoveryAgentVersion); err != nil {
		var conflict *conflictError
		if errors.As(err, &conflict) {
			apiError(w, http.StatusConflict, "%v", err)
			return
		}
		apiError(w, http.StatusInternalServerError, "register host: %v", err)
		return
	}
	s.registry.register(hostID, r.PathValue("infraEnv"))
	s.events.add(ie.Namespace, ie.Name, "Host %s registered", hostID)
	writeJSON(w, http.StatusCreated, agentapi.Host{ID: hostID, InfraEnvID: r.PathValue("infraEnv"), Status: "discovering"})
}

func (s *Service) handleInstructions(w http.ResponseWriter, r *http.Request) {
	steps := s.registry.next(r.PathValue("host"))
	if steps == nil {
		steps = []agentapi.Step{}
	}
	writeJSON(w, http.StatusOK, agentapi.Instructions{NextInstructionSeconds: 3, Instructions: steps})
}

func (s *Service) handleStepReply(w http.ResponseWriter, r *http.Request) {
	var reply agentapi.StepReply
	if !decode(w, r, &reply) {
		return
	}
	host := r.PathValue("host")
	switch reply.StepType {
	case agentapi.StepInventory:
		if reply.ExitCode != 0 {
			apiError(w, http.StatusBadRequest, "inventory step failed on the host: %s", reply.Error)
			return
		}
		if err := s.recordInventory(r.Context(), host, reply.Output); err != nil {
			var bad *badInputError
			if errors.As(err, &bad) {
				apiError(w, http.StatusBadRequest, "%v", err)
				return
			}
			apiError(w, http.StatusInternalServerError, "record inventory: %v", err)
			return
		}
	case agentapi.StepInstall:
		if reply.ExitCode != 0 {
			if err := s.recordStage(r.Context(), host, "Failed", reply.Error); err != nil {
				apiError(w, http.StatusInternalServerError, "record failure: %v", err)
				return
			}
		}
	default:
		apiError(w, http.StatusBadRequest, "unknown step type %q", reply.StepType)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Service) handleProgress(w http.ResponseWriter, r *http.Request) {
	var p agentapi.Progress
	if !decode(w, r, &p) {
		return
	}
	if !knownStage(p.CurrentStage) {
		apiError(w, http.StatusBadRequest, "unknown install stage %q", p.CurrentStage)
		return
	}
	if err := s.recordStage(r.Context(), r.PathValue("host"), p.CurrentStage, p.ProgressInfo); err != nil {
		var conflict *conflictError
		if errors.As(err, &conflict) {
			apiError(w, http.StatusConflict, "%v", err)
			return
		}
		apiError(w, http.StatusInternalServerError, "record progress: %v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// badInputError is a client mistake (400).
type badInputError struct{ msg string }

func (e *badInputError) Error() string { return e.msg }

// conflictError is a state conflict (409).
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }
