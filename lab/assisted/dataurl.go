package assisted

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
)

// decodeDataURL decodes an RFC 2397 data URL, percent-encoded or base64.
func decodeDataURL(src string) ([]byte, error) {
	rest, ok := strings.CutPrefix(src, "data:")
	if !ok {
		return nil, errors.New("not a data URL")
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("data URL without ','")
	}
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(data)
	}
	s, err := url.PathUnescape(data)
	return []byte(s), err
}
