package libvirtdeploy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // Ironic accepts md5 image checksums
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/paritylab/paritylab/lab/metal3"
)

// maxChecksumFile bounds a downloaded checksum file.
const maxChecksumFile = 1 << 20

// checksum is an expected digest.
type checksum struct {
	kind string // md5, sha256, sha512; "" means none to check
	hex  string
}

// expectedChecksum reads image.Checksum: a digest, or (as Ironic accepts)
// the URL of a checksum file with a line for the image's file name.
func (d *Deployer) expectedChecksum(ctx context.Context, image metal3.Image) (checksum, error) {
	sum := strings.TrimSpace(image.Checksum)
	if sum == "" {
		return checksum{}, nil
	}
	if strings.HasPrefix(sum, "http://") || strings.HasPrefix(sum, "https://") {
		var err error
		if sum, err = d.checksumFromFile(ctx, sum, image.URL); err != nil {
			return checksum{}, err
		}
	}
	kind, err := checksumKind(image.ChecksumType, sum)
	if err != nil {
		return checksum{}, fmt.Errorf("image %s: %w", image.URL, err)
	}
	return checksum{kind: kind, hex: strings.ToLower(sum)}, nil
}

func checksumKind(typ, sum string) (string, error) {
	if _, err := hex.DecodeString(sum); err != nil {
		return "", fmt.Errorf("checksum %q is not hexadecimal", sum)
	}
	byLength := map[int]string{32: "md5", 64: "sha256", 128: "sha512"}
	switch typ {
	case "", "auto":
		if k, ok := byLength[len(sum)]; ok {
			return k, nil
		}
		return "", fmt.Errorf("checksum of %d hex digits is neither md5, sha256 nor sha512", len(sum))
	case "md5", "sha256", "sha512":
		if byLength[len(sum)] != typ {
			return "", fmt.Errorf("checksum of %d hex digits is not %s", len(sum), typ)
		}
		return typ, nil
	}
	return "", fmt.Errorf("checksum type %q is not md5, sha256, sha512 or auto", typ)
}

// checksumFromFile finds the image's digest in a checksum file: the line
// naming the image's file, or the only line.
func (d *Deployer) checksumFromFile(ctx context.Context, fileURL, imageURL string) (string, error) {
	body, err := d.get(ctx, fileURL)
	if err != nil {
		return "", fmt.Errorf("read checksum file: %w", err)
	}
	defer body.Close()
	raw, err := io.ReadAll(io.LimitReader(body, maxChecksumFile))
	if err != nil {
		return "", fmt.Errorf("read checksum file %s: %w", fileURL, err)
	}
	name := ""
	if u, err := url.Parse(imageURL); err == nil {
		name = path.Base(u.Path)
	}
	var lines [][]string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 {
			lines = append(lines, f)
		}
	}
	for _, f := range lines {
		if len(f) > 1 && strings.TrimPrefix(f[len(f)-1], "*") == name {
			return f[0], nil
		}
	}
	if len(lines) == 1 {
		return lines[0][0], nil
	}
	return "", fmt.Errorf("checksum file %s has no line for %s", fileURL, name)
}

// verify hashes the file and compares.
func verify(file string, want checksum) error {
	if want.kind == "" {
		return nil
	}
	h := map[string]func() hash.Hash{"md5": md5.New, "sha256": sha256.New, "sha512": sha512.New}[want.kind]()
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("read downloaded image: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read downloaded image: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want.hex {
		return fmt.Errorf("%s checksum %s, want %s: the download is not the image", want.kind, got, want.hex)
	}
	return nil
}
