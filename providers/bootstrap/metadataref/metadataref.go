// Package metadataref is the grammar of node registration values (a
// kubelet label's value, the provider ID) that a node resolves at boot
// from its config drive: "$NAME" or "${NAME}" names the whole value, and
// the variables are METADATA_<KEY> for each key of the drive's
// openstack/latest/meta_data.json, the key upper-cased with '-' as '_'.
// The bare-metal operator writes the host's UID there as "uuid", so
// "metal3.io/uuid=$METADATA_UUID" is the label CAPM3 finds a host's Node
// by. It is CAPOA's convention (its nodeRegistration documentation).
//
// It has no dependencies: the lab's node agent resolves with it too.
package metadataref

import (
	"fmt"
	"regexp"
	"strings"
)

var name = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse tells a reference from a plain value: for "$NAME" or "${NAME}" it
// returns NAME and true. A value that starts with '$' but names no valid
// variable is an error.
func Parse(value string) (string, bool, error) {
	rest, ok := strings.CutPrefix(value, "$")
	if !ok {
		return "", false, nil
	}
	if inner, braced := strings.CutPrefix(rest, "{"); braced {
		var closed bool
		if rest, closed = strings.CutSuffix(inner, "}"); !closed {
			return "", false, fmt.Errorf("%q opens ${ without closing it", value)
		}
	}
	if !name.MatchString(rest) {
		return "", false, fmt.Errorf("%q is not a variable reference: the name must be letters, digits and '_', not starting with a digit, e.g. $METADATA_UUID", value)
	}
	return rest, true, nil
}

// EnvName is the variable a metadata key is read into.
func EnvName(key string) string {
	return "METADATA_" + strings.ReplaceAll(strings.ToUpper(key), "-", "_")
}

// Env is the variables of a config drive's metadata.
func Env(meta map[string]string) map[string]string {
	env := make(map[string]string, len(meta))
	for k, v := range meta {
		env[EnvName(k)] = v
	}
	return env
}

// Resolve returns a plain value as it is and a reference's variable from
// env; a variable env lacks resolves to "", as an unset shell variable.
func Resolve(value string, env map[string]string) (string, error) {
	n, ok, err := Parse(value)
	if err != nil || !ok {
		return value, err
	}
	return env[n], nil
}
