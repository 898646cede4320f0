package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// The node config lives in the last MiB of the install disk, past any image
// the lab writes: the lab's stand-in for the ignition a node boots with.
const (
	configAreaSize  = 1 << 20
	configAreaMagic = "PLNODE01"
)

// writeConfigArea writes cfg at the end of the disk (a device or a file).
func writeConfigArea(disk string, cfg agentapi.NodeConfig) error {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode node config: %w", err)
	}
	if len(raw)+12 > configAreaSize {
		return fmt.Errorf("node config of %d bytes does not fit the config area", len(raw))
	}
	f, err := os.OpenFile(disk, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", disk, err)
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end < configAreaSize {
		return fmt.Errorf("size of %s: %d bytes, %v", disk, end, err)
	}
	var buf bytes.Buffer
	buf.WriteString(configAreaMagic)
	_ = binary.Write(&buf, binary.LittleEndian, uint32(len(raw)))
	buf.Write(raw)
	if _, err := f.WriteAt(buf.Bytes(), end-configAreaSize); err != nil {
		return fmt.Errorf("write node config: %w", err)
	}
	return f.Sync()
}

// errNoConfigArea says the disk carries no node config.
var errNoConfigArea = errors.New("no node config on the disk")

// readConfigArea reads the node config from the end of the disk.
func readConfigArea(disk string) (agentapi.NodeConfig, error) {
	var cfg agentapi.NodeConfig
	f, err := os.Open(disk)
	if err != nil {
		return cfg, fmt.Errorf("open %s: %w", disk, err)
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end < configAreaSize {
		return cfg, errNoConfigArea
	}
	head := make([]byte, 12)
	if _, err := f.ReadAt(head, end-configAreaSize); err != nil || string(head[:8]) != configAreaMagic {
		return cfg, errNoConfigArea
	}
	n := binary.LittleEndian.Uint32(head[8:])
	if n > configAreaSize-12 {
		return cfg, fmt.Errorf("node config length %d is corrupt", n)
	}
	raw := make([]byte, n)
	if _, err := f.ReadAt(raw, end-configAreaSize+12); err != nil {
		return cfg, fmt.Errorf("read node config: %w", err)
	}
	return cfg, json.Unmarshal(raw, &cfg)
}
