package redfish

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// Credentials are the users the server lets in, each with the bcrypt hash
// of its password, as an htpasswd file holds them.
type Credentials map[string][]byte

// LoadHtpasswd reads an htpasswd file of bcrypt entries (`htpasswd -B`).
func LoadHtpasswd(path string) (Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open htpasswd file: %w", err)
	}
	defer f.Close()
	creds, err := ParseHtpasswd(f)
	if err != nil {
		return nil, fmt.Errorf("read htpasswd file %s: %w", path, err)
	}
	return creds, nil
}

// ParseHtpasswd parses `user:hash` lines; blank lines and lines starting
// with # are skipped. Only bcrypt hashes are accepted: the others htpasswd
// can write (MD5, SHA-1, crypt, plain text) are too weak to keep, and a
// file that silently let nobody in would be worse than an error now.
func ParseHtpasswd(r io.Reader) (Credentials, error) {
	creds := Credentials{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, hash, err := parseHtpasswdLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if _, dup := creds[user]; dup {
			return nil, fmt.Errorf("line %d: user %q appears twice", n, user)
		}
		creds[user] = hash
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read htpasswd: %w", err)
	}
	if len(creds) == 0 {
		return nil, errors.New("no users in htpasswd")
	}
	return creds, nil
}

func parseHtpasswdLine(line string) (string, []byte, error) {
	user, hash, ok := strings.Cut(line, ":")
	if !ok || user == "" || hash == "" {
		return "", nil, errors.New("want user:hash")
	}
	if kind := hashKind(hash); kind != "bcrypt" {
		return "", nil, fmt.Errorf("user %q has a %s hash; only bcrypt is accepted (create it with `htpasswd -B`)", user, kind)
	}
	if _, err := bcrypt.Cost([]byte(hash)); err != nil {
		return "", nil, fmt.Errorf("user %q: parse bcrypt hash: %w", user, err)
	}
	return user, []byte(hash), nil
}

// hashKind names the scheme of an htpasswd hash, for the error message.
func hashKind(hash string) string {
	switch {
	case strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2b$"), strings.HasPrefix(hash, "$2y$"):
		return "bcrypt"
	case strings.HasPrefix(hash, "$apr1$"):
		return "MD5 (apr1)"
	case strings.HasPrefix(hash, "{SHA}"):
		return "SHA-1"
	case strings.HasPrefix(hash, "$5$"), strings.HasPrefix(hash, "$6$"):
		return "SHA-crypt"
	case strings.HasPrefix(hash, "$"):
		return "unknown"
	}
	return "crypt or plain text"
}

// HtpasswdLine returns an htpasswd line for user with a bcrypt hash of
// password, as `htpasswd -B` writes it.
func HtpasswdLine(user, password string) (string, error) {
	if user == "" || strings.ContainsAny(user, ":\n") {
		return "", fmt.Errorf("htpasswd user %q must be non-empty without ':' or newlines", user)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return user + ":" + string(hash) + "\n", nil
}
