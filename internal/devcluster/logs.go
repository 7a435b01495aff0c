package devcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// logFiles are the per-component log files under <data-dir>/logs.
type logFiles struct {
	dir       string
	etcd      *os.File
	apiserver *os.File
	manager   *os.File
}

func openLogs(dir string) (*logFiles, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("creating the log folder: %w", err)
	}
	l := &logFiles{dir: dir}
	var err error
	if l.etcd, err = os.Create(filepath.Join(dir, "etcd.log")); err != nil {
		return nil, nil, fmt.Errorf("creating the etcd log: %w", err)
	}
	if l.apiserver, err = os.Create(filepath.Join(dir, "kube-apiserver.log")); err != nil {
		_ = l.etcd.Close()
		return nil, nil, fmt.Errorf("creating the kube-apiserver log: %w", err)
	}
	if l.manager, err = os.Create(filepath.Join(dir, "manager.log")); err != nil {
		_ = errors.Join(l.etcd.Close(), l.apiserver.Close())
		return nil, nil, fmt.Errorf("creating the manager log: %w", err)
	}
	return l, func() { _ = errors.Join(l.etcd.Close(), l.apiserver.Close(), l.manager.Close()) }, nil
}
