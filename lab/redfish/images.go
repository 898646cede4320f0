package redfish

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults of image downloads.
const (
	defaultMaxImageBytes   = 8 << 30
	defaultDownloadTimeout = 10 * time.Minute
	maxRedirects           = 5
)

const insertAction = "VirtualMedia.InsertMedia"

// imageStore downloads the images clients insert into its directory and
// keeps track of which file each device holds, to remove it on eject.
type imageStore struct {
	dir      string
	client   *http.Client
	maxBytes int64
	timeout  time.Duration

	mu    sync.Mutex
	files map[string]string // system/device -> file
}

// imageSource is where an image comes from.
type imageSource struct {
	url      *url.URL
	user     string
	password string
}

// checkImageURL enforces the project's network rule: the emulator fetches
// only from loopback, so a lab can never be made to pull from (or probe)
// another host.
func checkImageURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errActionParamValue(insertAction, "Image", fmt.Sprintf("%q is not a URL: %v", raw, err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errActionParamValue(insertAction, "Image", fmt.Sprintf("scheme %q is not supported; use an http:// or https:// URL", u.Scheme))
	}
	if err := checkLoopbackHost(u.Hostname()); err != nil {
		return nil, errActionParamValue(insertAction, "Image", err.Error())
	}
	return u, nil
}

func checkLoopbackHost(host string) error {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("image host %q is not an IP address; this emulator downloads only from loopback addresses (127.0.0.0/8 or [::1]), written as IPs", host)
	}
	if !ip.Unmap().IsLoopback() {
		return fmt.Errorf("image host %s is not a loopback address; this emulator downloads only from 127.0.0.0/8 or [::1] (network safety rule of the lab)", host)
	}
	return nil
}

// defaultDownloadClient refuses, at connect time, any address that is not
// loopback, and uses no proxy. It does not verify server certificates,
// like a BMC's VirtualMedia with VerifyCertificate false: the host is
// loopback anyway.
func defaultDownloadClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: loopbackOnly}
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback only; see above
		TLSHandshakeTimeout: 10 * time.Second,
	}}
}

func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	return checkLoopbackHost(host)
}

// withRedirectCheck copies a client so that redirects, too, must stay on
// loopback.
func withRedirectCheck(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to scheme %q refused", req.URL.Scheme)
		}
		return checkLoopbackHost(req.URL.Hostname())
	}
	return &cp
}

// fetch downloads an image for one device of one system and returns the
// local file.
func (st *imageStore) fetch(ctx context.Context, system, device string, src imageSource) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.url.String(), nil)
	if err != nil {
		return "", errActionParamValue(insertAction, "Image", err.Error())
	}
	if src.user != "" {
		req.SetBasicAuth(src.user, src.password)
	}
	resp, err := st.client.Do(req)
	if err != nil {
		return "", downloadError(src.url, err)
	}
	defer resp.Body.Close()
	if err := statusError(src.url, resp); err != nil {
		return "", err
	}
	return st.save(resp.Body, system, device, src.url)
}

// save writes an image under a name of its own, through a temporary file,
// so a device never sees a half-written image.
func (st *imageStore) save(body io.Reader, system, device string, u *url.URL) (string, error) {
	tmp, err := os.CreateTemp(st.dir, ".download-*")
	if err != nil {
		return "", errInternal(fmt.Errorf("create image file: %w", err))
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	n, err := io.Copy(tmp, io.LimitReader(body, st.maxBytes+1))
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return "", downloadError(u, err)
	}
	if n > st.maxBytes {
		return "", errActionParamValue(insertAction, "Image", fmt.Sprintf("the image at %s is larger than the limit of %d bytes", u.Redacted(), st.maxBytes))
	}
	suffix, err := randomHex(4)
	if err != nil {
		return "", errInternal(err)
	}
	final := filepath.Join(st.dir, fmt.Sprintf("%s-%s-%s%s", safeName(system), safeName(device), suffix, imageExt(u)))
	// World-readable: a hypervisor running as another user attaches it.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", errInternal(fmt.Errorf("set image file mode: %w", err))
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", errInternal(fmt.Errorf("store image: %w", err))
	}
	return final, nil
}

func downloadError(u *url.URL, err error) error {
	if errors.Is(err, context.Canceled) {
		return backendError(err, "", "")
	}
	return newError(http.StatusBadRequest, "CouldNotEstablishConnection",
		fmt.Sprintf("The service could not download the image at %s: %v.", u.Redacted(), err),
		"Ensure that the image server runs and the URI is reachable from the emulator, then resubmit the request.", u.Redacted())
}

func statusError(u *url.URL, resp *http.Response) error {
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusNotFound:
		return newError(http.StatusBadRequest, "ResourceMissingAtURI",
			fmt.Sprintf("The image at the URI %s was not found (HTTP 404).", u.Redacted()),
			"Place the image at the URI or correct the URI and resubmit the request.", u.Redacted())
	case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
		return newError(http.StatusBadRequest, "ResourceAtUriUnauthorized",
			fmt.Sprintf("While downloading the image at %s, the image server answered %s; pass UserName and Password if it needs them.", u.Redacted(), resp.Status),
			"Ensure that the appropriate access is provided for the service to download the image.", u.Redacted(), resp.Status)
	}
	return newError(http.StatusBadRequest, "CouldNotEstablishConnection",
		fmt.Sprintf("The image server at %s answered %s.", u.Redacted(), resp.Status),
		"Ensure that the image server serves the image, then resubmit the request.", u.Redacted())
}

// track records the file a device holds and returns the one it replaces.
func (st *imageStore) track(system, device, file string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := system + "/" + device
	old := st.files[key]
	if file == "" {
		delete(st.files, key)
	} else {
		st.files[key] = file
	}
	return old
}

// release forgets and removes the file a device held.
func (st *imageStore) release(system, device string) {
	st.remove(st.track(system, device, ""))
}

// remove deletes an image file, if any; a leftover file only costs disk.
func (st *imageStore) remove(file string) {
	if file != "" {
		_ = os.Remove(file)
	}
}

// safeName keeps a file name component to [A-Za-z0-9._-].
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() > 64 {
		return b.String()[:64]
	}
	return b.String()
}

// imageExt keeps the extension of the URL's file name (.iso, .img), which
// hypervisors and humans use to tell what the file is.
func imageExt(u *url.URL) string {
	ext := path.Ext(u.Path)
	if ext == "" || len(ext) > 8 || safeName(ext[1:]) != ext[1:] {
		return ".iso"
	}
	return ext
}

// imageName is the file name part of an image URL, for ImageName.
func imageName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" {
		return ""
	}
	return name
}
