package images

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// cpioWriter writes the "newc" cpio format the kernel unpacks as an
// initramfs. Every entry gets mtime 0 and uid/gid 0 so the archive depends
// only on its content.
type cpioWriter struct {
	w     io.Writer
	inode uint32
	err   error
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000
	modeLink = 0o120000
)

func (c *cpioWriter) header(name string, mode uint32, size int) {
	if c.err != nil {
		return
	}
	c.inode++
	nlink := 1
	if mode&modeDir != 0 {
		nlink = 2
	}
	_, c.err = fmt.Fprintf(c.w, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%s\x00",
		c.inode, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name)+1, 0, name)
	c.pad(110 + len(name) + 1)
}

func (c *cpioWriter) pad(n int) {
	if c.err == nil && n%4 != 0 {
		_, c.err = c.w.Write(make([]byte, 4-n%4))
	}
}

func (c *cpioWriter) data(b []byte) {
	if c.err != nil {
		return
	}
	_, c.err = c.w.Write(b)
	c.pad(len(b))
}

func (c *cpioWriter) dir(name string) { c.header(name, modeDir|0o755, 0) }

func (c *cpioWriter) file(name string, perm uint32, content []byte) {
	c.header(name, modeFile|perm, len(content))
	c.data(content)
}

func (c *cpioWriter) symlink(name, target string) {
	c.header(name, modeLink|0o777, len(target))
	c.data([]byte(target))
}

func (c *cpioWriter) close() error {
	c.header("TRAILER!!!", 0, 0)
	return c.err
}

// parents returns every parent directory of the paths, sorted so a parent
// comes before its children.
func parents(paths []string) []string {
	set := map[string]bool{}
	for _, p := range paths {
		for dir := parentDir(p); dir != ""; dir = parentDir(dir) {
			set[dir] = true
		}
	}
	out := make([]string, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return ""
	}
	return p[:i]
}
