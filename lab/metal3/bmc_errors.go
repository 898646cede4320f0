package metal3

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/stmcginnis/gofish/common"
)

// bmcFailure is a failed exchange with a BMC, with a message that says
// what went wrong in terms of the BMC, not of the HTTP client.
type bmcFailure struct {
	action string
	err    error
}

func (f *bmcFailure) Error() string { return f.action + ": " + describeBMCError(f.err) }
func (f *bmcFailure) Unwrap() error { return f.err }

func bmcError(action string, err error) error { return &bmcFailure{action: action, err: err} }

// describeBMCError turns a Redfish error body or a transport error into a
// sentence.
func describeBMCError(err error) string {
	var re *common.Error
	if errors.As(err, &re) {
		return describeRedfishError(re)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return "the BMC did not answer in time: " + ue.Err.Error()
		}
		return "cannot reach the BMC: " + ue.Err.Error()
	}
	return err.Error()
}

func describeRedfishError(re *common.Error) string {
	msg := re.Message
	for _, info := range re.ExtendedInfos {
		if info.Message != "" {
			msg = info.Message
			break
		}
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	status := fmt.Sprintf("HTTP %d %s", re.HTTPReturnedStatusCode, http.StatusText(re.HTTPReturnedStatusCode))
	switch re.HTTPReturnedStatusCode {
	case http.StatusUnauthorized:
		return fmt.Sprintf("the BMC rejected the credentials (%s): %s", status, msg)
	case 0:
		return msg
	}
	if re.Code != "" {
		return fmt.Sprintf("the BMC answered %s (%s): %s", status, re.Code, msg)
	}
	return fmt.Sprintf("the BMC answered %s: %s", status, msg)
}
