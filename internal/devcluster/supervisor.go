package devcluster

import (
	"context"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/internal/childproc"
)

// supervisor holds the component processes: it starts them in order,
// tells when one died, and stops them in reverse order.
type supervisor struct {
	procs     []*childproc.Process
	exited    chan struct{}
	initOnce  sync.Once
	closeOnce sync.Once
}

func (s *supervisor) init() {
	s.initOnce.Do(func() { s.exited = make(chan struct{}) })
}

// start runs spec and waits until it is healthy; from then on its death
// closes anyExited.
func (s *supervisor) start(ctx context.Context, spec componentSpec, logDir string) error {
	s.init()
	proc, err := startComponent(ctx, spec, logDir)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, proc)
	go func() {
		<-proc.Exited()
		s.closeExited()
	}()
	return nil
}

func (s *supervisor) closeExited() {
	s.closeOnce.Do(func() { close(s.exited) })
}

// anyExited is closed once any component has exited.
func (s *supervisor) anyExited() <-chan struct{} {
	s.init()
	return s.exited
}

// died names the first component that exited, or returns nil.
func (s *supervisor) died() error {
	for _, p := range s.procs {
		select {
		case <-p.Exited():
			return p.ExitError()
		default:
		}
	}
	return nil
}

// stopAll stops the components, last started first.
func (s *supervisor) stopAll() {
	for _, v := range slices.Backward(s.procs) {
		v.Stop(componentStopGrace)
	}
}
