package redfish

import (
	"net/http"
)

// RedfishVersion is the protocol version the service root announces.
const RedfishVersion = "1.11.0"

// getVersions answers GET /redfish: the protocol versions served.
func (s *Server) getVersions(w http.ResponseWriter, _ *http.Request, _ *request) error {
	writeJSON(w, http.StatusOK, resource{"v1": rootPath + "/"})
	return nil
}

func (s *Server) getServiceRoot(w http.ResponseWriter, _ *http.Request, _ *request) error {
	writeJSON(w, http.StatusOK, resource{
		"@odata.type":    "#ServiceRoot.v1_5_0.ServiceRoot",
		"@odata.id":      rootPath + "/",
		"Id":             "RootService",
		"Name":           "Root Service",
		"RedfishVersion": RedfishVersion,
		"UUID":           s.uuid,
		"Product":        "paritylab Redfish emulator",
		"Vendor":         "paritylab",
		"Systems":        link(systemsPath),
		"Managers":       link(managersPath),
		"Chassis":        link(chassisPath),
		"SessionService": link(sessionServicePath),
		"Links":          resource{"Sessions": link(sessionsPath)},
	})
	return nil
}

func (s *Server) getSessionService(w http.ResponseWriter, _ *http.Request, _ *request) error {
	writeJSON(w, http.StatusOK, resource{
		"@odata.type":    "#SessionService.v1_1_8.SessionService",
		"@odata.id":      sessionServicePath,
		"Id":             "SessionService",
		"Name":           "Session Service",
		"ServiceEnabled": true,
		"SessionTimeout": int(sessionTimeout.Seconds()),
		"Sessions":       link(sessionsPath),
	})
	return nil
}

func (s *Server) listSessions(w http.ResponseWriter, _ *http.Request, _ *request) error {
	ids := s.sessions.ids()
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = sessionPath(id)
	}
	writeJSON(w, http.StatusOK, collection("#SessionCollection.SessionCollection", sessionsPath, "Session Collection", paths))
	return nil
}

// createSession is the Redfish login: POST {"UserName","Password"} answers
// 201 with X-Auth-Token and Location. It needs no credentials of its own.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request, _ *request) error {
	body, err := readObject(w, r)
	if err != nil {
		return err
	}
	user, pass, err := loginFields(body)
	if err != nil {
		return err
	}
	if !s.auth.password(user, pass) {
		return errUnauthorized("The credentials were rejected: unknown user or wrong password.")
	}
	id, token, err := s.sessions.create(user)
	if err != nil {
		return errInternal(err)
	}
	w.Header().Set("X-Auth-Token", token)
	w.Header().Set("Location", sessionPath(id))
	writeJSON(w, http.StatusCreated, sessionResource(id, user))
	return nil
}

func loginFields(body object) (user, pass string, err error) {
	allowed := []string{"UserName", "Password"}
	if k := body.unknown(allowed...); k != "" {
		return "", "", errPropertyUnknown("#/"+k, allowed)
	}
	values := make([]string, len(allowed))
	for i, name := range allowed {
		v, ok, terr := body.str(name)
		if terr != nil {
			return "", "", errPropertyType("#/"+name, terr.raw, "a string")
		}
		if !ok {
			return "", "", errPropertyMissing("#/" + name)
		}
		values[i] = v
	}
	return values[0], values[1], nil
}

func (s *Server) getSession(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sess, ok := s.sessions.get(rq.param("session"))
	if !ok {
		return errResourceNotFound("Session", rq.param("session"))
	}
	writeJSON(w, http.StatusOK, sessionResource(sess.id, sess.user))
	return nil
}

// deleteSession is the Redfish logout.
func (s *Server) deleteSession(w http.ResponseWriter, _ *http.Request, rq *request) error {
	if !s.sessions.delete(rq.param("session")) {
		return errResourceNotFound("Session", rq.param("session"))
	}
	return noContent(w)
}

func sessionResource(id, user string) resource {
	return resource{
		"@odata.type": "#Session.v1_3_0.Session",
		"@odata.id":   sessionPath(id),
		"Id":          id,
		"Name":        "User Session",
		"UserName":    user,
	}
}
