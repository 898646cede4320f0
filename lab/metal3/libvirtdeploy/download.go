package libvirtdeploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"syscall"
	"time"
)

// loopbackClient connects to loopback addresses only, whatever a name
// resolves to.
func loopbackClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
			return fmt.Errorf("refusing to connect to %s: images come from loopback only", address)
		}
		return nil
	}}
	return &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, TLSHandshakeTimeout: 10 * time.Second}}
}

// withRedirectCheck makes a copy of c whose redirects must stay on
// loopback too.
func withRedirectCheck(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return checkURL(req.URL)
	}
	return &cp
}

// checkURL accepts http(s) URLs on a loopback IP or localhost.
func checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %s: scheme %q is not http or https", u.Redacted(), u.Scheme)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
		return fmt.Errorf("URL %s is not on loopback (127.0.0.0/8, ::1, localhost): the lab downloads nothing from elsewhere", u.Redacted())
	}
	return nil
}

// download writes what rawURL serves to dest, at most limit bytes.
func (d *Deployer) download(ctx context.Context, rawURL, dest string, limit int64) error {
	body, err := d.get(ctx, rawURL)
	if err != nil {
		return err
	}
	defer body.Close()
	f, err := os.Create(dest)
	if err != nil {
		return fmt.Errorf("create download file: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(body, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return fmt.Errorf("download %s: %w", rawURL, err)
	case n > limit:
		return fmt.Errorf("download %s: larger than %d bytes", rawURL, limit)
	}
	return nil
}

// get opens a loopback URL that answers 200.
func (d *Deployer) get(ctx context.Context, rawURL string) (io.ReadCloser, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse URL %q: %w", rawURL, err)
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", u.Redacted(), err)
	}
	resp, err := d.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", u.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("download %s: HTTP %s", u.Redacted(), resp.Status)
	}
	return resp.Body, nil
}
