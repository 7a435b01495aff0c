//go:build drills

package drills

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// webhookProxy listens where the webhook configurations point and passes
// each connection to a manager whose webhook server is ready, the way a
// Service spreads over a Deployment's ready replicas: a manager killed or
// frozen stops getting connections within a readiness period. Down
// refuses every connection, as when no replica is ready.
type webhookProxy struct {
	listener net.Listener

	mu       sync.Mutex
	backends []*webhookBackend
	down     bool
	// conns are the connections passed through: going down cuts them (the
	// API server keeps connections to webhooks open).
	conns map[net.Conn]bool
}

type webhookBackend struct {
	addr, readyz string
	ready        bool
}

func startWebhookProxy(ctx context.Context, addr string) (*webhookProxy, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &webhookProxy{listener: l, conns: map[net.Conn]bool{}}
	go p.serve()
	go p.probe(ctx)
	return p, nil
}

func (p *webhookProxy) close() { _ = p.listener.Close() }

// add routes to a manager's webhook server once its /readyz answers.
func (p *webhookProxy) add(addr, readyz string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = append(p.backends, &webhookBackend{addr: addr, readyz: readyz})
}

func (p *webhookProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			_ = c.Close()
		}
	}
}

func (p *webhookProxy) pick() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return "", false
	}
	for _, b := range p.backends {
		if b.ready {
			return b.addr, true
		}
	}
	return "", false
}

// probe marks backends ready while their /readyz answers within 300ms.
func (p *webhookProxy) probe(ctx context.Context) {
	client := &http.Client{Timeout: 300 * time.Millisecond}
	wait.UntilWithContext(ctx, func(context.Context) {
		p.mu.Lock()
		backends := append([]*webhookBackend(nil), p.backends...)
		p.mu.Unlock()
		for _, b := range backends {
			resp, err := client.Get(b.readyz)
			ready := err == nil && resp.StatusCode == http.StatusOK
			if resp != nil {
				_ = resp.Body.Close()
			}
			p.mu.Lock()
			b.ready = ready
			p.mu.Unlock()
		}
	}, 250*time.Millisecond)
}

func (p *webhookProxy) serve() {
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return
		}
		go p.pass(conn)
	}
}

func (p *webhookProxy) pass(conn net.Conn) {
	defer conn.Close()
	p.mu.Lock()
	p.conns[conn] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, conn)
		p.mu.Unlock()
	}()
	addr, ok := p.pick()
	if !ok {
		return
	}
	backend, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return
	}
	defer backend.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(backend, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, backend); done <- struct{}{} }()
	<-done
}

// isReady tells whether the proxy routes to the backend at addr.
func (p *webhookProxy) isReady(addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.backends {
		if b.addr == addr {
			return b.ready
		}
	}
	return false
}
