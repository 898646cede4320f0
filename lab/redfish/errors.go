package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// registry is the Base message registry version whose message IDs the
// server answers with. Clients match on the ID after the version.
const registry = "Base.1.16."

// apiError is an error the server answers with a Redfish error body. Every
// failure a handler returns becomes one, so a client always learns what to
// fix from the body, never from a bare status line.
type apiError struct {
	status int
	// id is the short Base registry message ID, e.g. "PropertyUnknown".
	id string
	// message says what went wrong and what to fix.
	message    string
	resolution string
	args       []string
	// related are JSON pointers to the properties involved ("#/Boot/X").
	related []string
	// header is added to the response (WWW-Authenticate, Allow).
	header http.Header
}

func (e *apiError) Error() string { return e.message }

func newError(status int, id, message, resolution string, args ...string) *apiError {
	return &apiError{status: status, id: id, message: message, resolution: resolution, args: args}
}

func (e *apiError) withRelated(pointers ...string) *apiError {
	e.related = append(e.related, pointers...)
	return e
}

func (e *apiError) withHeader(key, value string) *apiError {
	if e.header == nil {
		e.header = http.Header{}
	}
	e.header.Set(key, value)
	return e
}

func errURINotFound(path string) *apiError {
	return newError(http.StatusNotFound, "InvalidURI",
		fmt.Sprintf("The URI %s was not found; start from /redfish/v1/ and follow @odata.id links.", path),
		"Provide a valid URI and resubmit the request.", path)
}

func errResourceNotFound(kind, id string) *apiError {
	return newError(http.StatusNotFound, "ResourceNotFound",
		fmt.Sprintf("The requested resource of type %s named '%s' was not found; list its collection for valid IDs.", kind, id),
		"Provide a valid resource identifier and resubmit the request.", kind, id)
}

func errMethodNotAllowed(method, path string, allowed []string) *apiError {
	list := strings.Join(allowed, ", ")
	return newError(http.StatusMethodNotAllowed, "OperationNotAllowed",
		fmt.Sprintf("The HTTP method %s is not allowed on %s; allowed: %s.", method, path, list),
		"Use one of the methods in the Allow header.").withHeader("Allow", list)
}

func errUnauthorized(message string) *apiError {
	return newError(http.StatusUnauthorized, "NoValidSession", message,
		"Send HTTP Basic credentials of a user in the emulator's htpasswd file, or the X-Auth-Token returned by POST /redfish/v1/SessionService/Sessions.").
		withHeader("WWW-Authenticate", `Basic realm="paritylab redfish"`)
}

func errMalformedJSON(err error) *apiError {
	return newError(http.StatusBadRequest, "MalformedJSON",
		fmt.Sprintf("The request body is not a valid JSON object: %v.", err),
		"Ensure that the request body is a valid JSON object and resubmit the request.")
}

func errEmptyJSON(what string) *apiError {
	return newError(http.StatusBadRequest, "EmptyJSON",
		fmt.Sprintf("The request body has no properties; %s.", what),
		"Add properties in the JSON object and resubmit the request.")
}

func errPayloadTooLarge(limit int64) *apiError {
	return newError(http.StatusRequestEntityTooLarge, "PayloadTooLarge",
		fmt.Sprintf("The request body exceeds the limit of %d bytes.", limit),
		"Send a smaller request body.")
}

func errPropertyUnknown(pointer string, allowed []string) *apiError {
	name := strings.TrimPrefix(pointer, "#/")
	return newError(http.StatusBadRequest, "PropertyUnknown",
		fmt.Sprintf("The property %s is not in the list of valid properties for the resource; this service accepts only %s here.", name, strings.Join(allowed, ", ")),
		"Remove the unknown property from the request body and resubmit the request.", name).withRelated(pointer)
}

func errPropertyNotWritable(pointer string) *apiError {
	name := strings.TrimPrefix(pointer, "#/")
	return newError(http.StatusBadRequest, "PropertyNotWritable",
		fmt.Sprintf("The property %s is a read only property and cannot be assigned a value.", name),
		"Remove the property from the request body and resubmit the request.", name).withRelated(pointer)
}

func errPropertyMissing(pointer string) *apiError {
	name := strings.TrimPrefix(pointer, "#/")
	return newError(http.StatusBadRequest, "PropertyMissing",
		fmt.Sprintf("The property %s is a required property and must be included in the request.", name),
		"Ensure that the property is in the request body and has a valid value and resubmit the request.", name).withRelated(pointer)
}

func errPropertyType(pointer, raw, want string) *apiError {
	name := strings.TrimPrefix(pointer, "#/")
	return newError(http.StatusBadRequest, "PropertyValueTypeError",
		fmt.Sprintf("The value %s for the property %s is of a different type than the property can accept; it must be %s.", raw, name, want),
		"Correct the value for the property in the request body and resubmit the request.", raw, name).withRelated(pointer)
}

func errPropertyNotInList(pointer, value string, allowed []string) *apiError {
	name := strings.TrimPrefix(pointer, "#/")
	return newError(http.StatusBadRequest, "PropertyValueNotInList",
		fmt.Sprintf("The value '%s' for the property %s is not in the list of acceptable values: %s.", value, name, strings.Join(allowed, ", ")),
		"Choose a value from the enumeration list and resubmit the request.", value, name).withRelated(pointer)
}

func errPropertyValue(pointer, value, why string) *apiError {
	name := strings.TrimPrefix(pointer, "#/")
	return newError(http.StatusBadRequest, "PropertyValueIncorrect",
		fmt.Sprintf("The property '%s' with the requested value of '%s' could not be written: %s.", name, value, why),
		"Correct the value for the property in the request body and resubmit the request.", name, value).withRelated(pointer)
}

func errActionParamMissing(action, param string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterMissing",
		fmt.Sprintf("The action %s requires the parameter %s to be present in the request body.", action, param),
		"Supply the action with the required parameter in the request body when the request is resubmitted.", action, param).
		withRelated("#/" + param)
}

func errActionParamUnknown(action, param string, allowed []string) *apiError {
	known := "no parameters"
	if len(allowed) > 0 {
		known = "only " + strings.Join(allowed, ", ")
	}
	return newError(http.StatusBadRequest, "ActionParameterUnknown",
		fmt.Sprintf("The action %s was submitted with the invalid parameter %s; it takes %s.", action, param, known),
		"Correct the invalid action parameter and resubmit the request.", action, param).withRelated("#/" + param)
}

func errActionParamType(action, param, raw, want string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterValueTypeError",
		fmt.Sprintf("The value %s for the parameter %s in the action %s is of a different type than the parameter can accept; it must be %s.", raw, param, action, want),
		"Correct the value for the parameter in the request body and resubmit the request.", raw, param, action).
		withRelated("#/" + param)
}

// errActionParamNotSupported answers a value the action does not support,
// such as an unknown ResetType.
func errActionParamNotSupported(action, param, value string, allowed []string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterNotSupported",
		fmt.Sprintf("The parameter %s=%q for the action %s is not supported on the target resource; supported values: %s.", param, value, action, strings.Join(allowed, ", ")),
		fmt.Sprintf("Use one of the values in %s@Redfish.AllowableValues and resubmit the request.", param), param, action).
		withRelated("#/" + param)
}

func errActionParamValue(action, param, why string) *apiError {
	return newError(http.StatusBadRequest, "ActionParameterValueError",
		fmt.Sprintf("The value for the parameter %s in the action %s is invalid: %s.", param, action, why),
		"Correct the value for the parameter in the request body and resubmit the request.", param, action).
		withRelated("#/" + param)
}

func errConflict(id, message string) *apiError {
	return newError(http.StatusConflict, id, message, "Bring the resource into the required state and resubmit the request.")
}

func errInternal(err error) *apiError {
	return newError(http.StatusInternalServerError, "InternalError",
		fmt.Sprintf("The request failed due to an internal service error: %v. The service is still operational.", err),
		"Resubmit the request. If the problem persists, read the emulator log.")
}

// errInjected is the answer of a fault set on a system.
func errInjected(status int, system string) *apiError {
	id := "GeneralError"
	switch status {
	case http.StatusServiceUnavailable:
		id = "ServiceTemporarilyUnavailable"
	case http.StatusInternalServerError:
		id = "InternalError"
	}
	return newError(status, id,
		fmt.Sprintf("Fault injected for system %s: this service answers HTTP %d on purpose.", system, status),
		"Clear the fault with DELETE /paritylab/v1/systems/"+system+"/faults.")
}

// backendError turns a Backend error into the API error a client can act
// on. invalidID and conflictID are the message IDs that fit the operation.
func backendError(err error, invalidID, conflictID string) error {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, ErrNotFound):
		return newError(http.StatusNotFound, "ResourceNotFound", capitalize(err.Error())+".",
			"Provide a valid resource identifier and resubmit the request.")
	case errors.Is(err, ErrInvalid):
		return newError(http.StatusBadRequest, invalidID, capitalize(err.Error())+".",
			"Correct the request and resubmit it.")
	case errors.Is(err, ErrConflict):
		return errConflict(conflictID, capitalize(err.Error())+".")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return newError(http.StatusServiceUnavailable, "ServiceTemporarilyUnavailable",
			fmt.Sprintf("The request was abandoned: %v.", err), "Resubmit the request.")
	}
	return errInternal(err)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// errorBody is the Redfish error response.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code         string    `json:"code"`
	Message      string    `json:"message"`
	ExtendedInfo []message `json:"@Message.ExtendedInfo"`
}

type message struct {
	ODataType         string   `json:"@odata.type"`
	MessageID         string   `json:"MessageId"`
	Message           string   `json:"Message"`
	MessageArgs       []string `json:"MessageArgs"`
	Severity          string   `json:"Severity"`
	MessageSeverity   string   `json:"MessageSeverity"`
	Resolution        string   `json:"Resolution"`
	RelatedProperties []string `json:"RelatedProperties,omitempty"`
}

func (e *apiError) body() errorBody {
	// sushy shows the message of the most severe entry: Critical or
	// Warning. Use Critical for what the client cannot fix by itself.
	severity := "Warning"
	if e.status >= 500 || e.status == http.StatusUnauthorized {
		severity = "Critical"
	}
	args := e.args
	if args == nil {
		args = []string{}
	}
	return errorBody{Error: errorObject{
		Code:    registry + e.id,
		Message: e.message,
		ExtendedInfo: []message{{
			ODataType:         "#Message.v1_1_1.Message",
			MessageID:         registry + e.id,
			Message:           e.message,
			MessageArgs:       args,
			Severity:          severity,
			MessageSeverity:   severity,
			Resolution:        e.resolution,
			RelatedProperties: e.related,
		}},
	}}
}

func writeError(w http.ResponseWriter, e *apiError) {
	for k, v := range e.header {
		w.Header()[k] = v
	}
	writeJSON(w, e.status, e.body())
}
