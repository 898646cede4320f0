package redfish

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// sinceParam is the one query parameter of the operations route.
const sinceParam = "since"

// operationsBody is the answer of GET /paritylab/v1/systems/{id}/operations.
type operationsBody struct {
	Operations []Operation `json:"operations"`
}

// getOperations answers the operation log of a system, optionally from a
// time on.
func (s *Server) getOperations(w http.ResponseWriter, r *http.Request, rq *request) error {
	since, err := parseSince(r.URL.RawQuery)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, operationsBody{Operations: s.ops.list(rq.system.ID, since)})
	return nil
}

// parseSince reads ?since=<RFC 3339 time>. Unknown parameters are refused
// rather than ignored: a misspelt since would silently return the whole
// log.
func parseSince(rawQuery string) (time.Time, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return time.Time{}, newError(http.StatusBadRequest, "QueryParameterValueFormatError",
			fmt.Sprintf("The query string could not be parsed: %v; send ?since=<RFC 3339 time> or nothing.", err),
			"Correct the query string and resubmit the request.", rawQuery, sinceParam)
	}
	for k := range q {
		if k != sinceParam {
			return time.Time{}, newError(http.StatusBadRequest, "QueryNotSupportedOnResource",
				fmt.Sprintf("The query parameter %s is not supported on the operations log; it takes only since.", k),
				"Remove the query parameter and resubmit the request.")
		}
	}
	values := q[sinceParam]
	switch len(values) {
	case 0:
		return time.Time{}, nil
	case 1:
	default:
		return time.Time{}, errSinceFormat(strings.Join(values, ","), "give since once")
	}
	// The RFC 3339 layout also accepts fractional seconds when parsing.
	t, err := time.Parse(time.RFC3339, values[0])
	if err != nil {
		why := "want an RFC 3339 time such as 2006-01-02T15:04:05Z or 2006-01-02T15:04:05.999999999+02:00"
		if strings.Contains(values[0], " ") {
			why += " (a '+' in the offset must be sent as %2B)"
		}
		return time.Time{}, errSinceFormat(values[0], why)
	}
	return t, nil
}

func errSinceFormat(value, why string) *apiError {
	return newError(http.StatusBadRequest, "QueryParameterValueFormatError",
		fmt.Sprintf("The value '%s' for the query parameter %s is not supported: %s.", value, sinceParam, why),
		"Correct the value of since and resubmit the request.", value, sinceParam)
}
