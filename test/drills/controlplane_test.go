//go:build drills

package drills

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
)

// childByName finds the child process of this test running the named
// program (envtest starts etcd and kube-apiserver as children), with its
// command line.
func childByName(name string) (int, []string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, err
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		end := bytes.LastIndexByte(stat, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(string(stat[end+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if filepath.Base(argv[0]) == name {
			return pid, argv, nil
		}
	}
	return 0, nil, fmt.Errorf("no child process %s", name)
}

// restart kills a control-plane process (kube-apiserver or etcd) with
// SIGKILL, keeps it down for downFor, and starts it again with the same
// command line (same ports, data and certificates), waiting until the API
// answers again.
func (d *drillCluster) restart(name string, downFor time.Duration) {
	d.t.Helper()
	pid, argv, err := childByName(name)
	if err != nil {
		// Started again by an earlier restart: find it among ours.
		for _, cmd := range d.restarted {
			if filepath.Base(cmd.Path) == name && cmd.ProcessState == nil {
				pid, argv = cmd.Process.Pid, cmd.Args
			}
		}
		if pid == 0 {
			d.t.Fatal(err)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		d.t.Fatalf("killing %s: %v", name, err)
	}
	d.eventually(name+" to be gone", 30*time.Second, func(context.Context) (bool, error) {
		return syscall.Kill(pid, 0) != nil, nil
	})
	select {
	case <-d.ctx.Done():
		return
	case <-time.After(downFor): // the outage itself
	}
	log, err := os.Create(filepath.Join(d.dir, fmt.Sprintf("%s-restarted-%d.log", name, time.Now().Unix())))
	if err != nil {
		d.t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("starting %s again: %v", name, err)
	}
	d.restarted = append(d.restarted, cmd)
	cs, err := kubernetes.NewForConfig(d.adminConfig())
	if err != nil {
		d.t.Fatal(err)
	}
	d.eventually("the API server to answer again", 2*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
}
