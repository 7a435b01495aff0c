//go:build drills

package drills

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// apiProxy stands between one manager and kube-apiserver: the manager talks
// plain HTTP to it, it talks to the API server as the cluster admin. It
// records every write with the time its answer came back, and injects the
// faults a drill asks for: answers to status writes lost after the write
// landed, or no answers at all for a while.
type apiProxy struct {
	name     string
	addr     string
	server   *http.Server
	upstream *url.URL
	rt       http.RoundTripper
	proxy    *httputil.ReverseProxy

	mu sync.Mutex
	// dropStatus is the share of status writes whose answer is lost.
	dropStatus float64
	rng        *rand.Rand
	// blackholeUntil holds every request unanswered until then.
	blackholeUntil time.Time
	blackholeOver  chan struct{}
	inflight       map[*http.Request]context.CancelFunc
	writes         []proxiedWrite
	dropped        int
}

// proxiedWrite is one write the manager made through the proxy.
type proxiedWrite struct {
	at       time.Time
	method   string
	resource string // e.g. workloads/status, leases
	code     int    // 0: no answer reached the manager
}

func (w proxiedWrite) landed() bool { return w.code >= 200 && w.code < 300 }

func startAPIProxy(name string, admin *rest.Config) (*apiProxy, error) {
	rt, err := rest.TransportFor(admin)
	if err != nil {
		return nil, err
	}
	upstream, err := url.Parse(admin.Host)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &apiProxy{name: name, addr: l.Addr().String(), upstream: upstream, rt: rt,
		rng: rand.New(rand.NewPCG(1, uint64(len(name)))), inflight: map[*http.Request]context.CancelFunc{}}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			r.Out.Host = upstream.Host
		},
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ErrorLog:      nil,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

func (p *apiProxy) URL() string { return "http://" + p.addr }

func (p *apiProxy) close() { _ = p.server.Close() }

// isWrite tells whether a request changes something.
func isWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// resourceOf names the resource (and subresource) of an API path:
// /apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w/status ->
// workloads/status.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// Drop the group prefix: api/v1 or apis/<group>/<version>.
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return ""
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

func (p *apiProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if !p.admit(r, cancel) {
		hangUp(w)
		return
	}
	defer p.done(r)
	r = r.WithContext(ctx)
	if !isWrite(r) {
		p.proxy.ServeHTTP(w, r)
		return
	}
	resource := resourceOf(r.URL.Path)
	out := r.Clone(ctx)
	out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = p.upstream.Scheme, p.upstream.Host, p.upstream.Host, ""
	resp, err := p.rt.RoundTrip(out)
	if err != nil {
		p.record(proxiedWrite{at: time.Now(), method: r.Method, resource: resource})
		hangUp(w)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		p.record(proxiedWrite{at: time.Now(), method: r.Method, resource: resource, code: resp.StatusCode})
		hangUp(w)
		return
	}
	if strings.HasSuffix(resource, "/status") && p.dropThis() {
		// The write landed; its answer does not reach the manager.
		p.record(proxiedWrite{at: time.Now(), method: r.Method, resource: resource, code: resp.StatusCode})
		hangUp(w)
		return
	}
	p.record(proxiedWrite{at: time.Now(), method: r.Method, resource: resource, code: resp.StatusCode})
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// admit waits out a blackhole; false means the request gets no answer.
func (p *apiProxy) admit(r *http.Request, cancel context.CancelFunc) bool {
	p.mu.Lock()
	until, over := p.blackholeUntil, p.blackholeOver
	if time.Now().Before(until) {
		p.mu.Unlock()
		select {
		case <-over:
		case <-r.Context().Done():
		}
		return false
	}
	p.inflight[r] = cancel
	p.mu.Unlock()
	return true
}

func (p *apiProxy) done(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inflight, r)
}

func (p *apiProxy) dropThis() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	drop := p.dropStatus > 0 && p.rng.Float64() < p.dropStatus
	if drop {
		p.dropped++
	}
	return drop
}

func (p *apiProxy) record(w proxiedWrite) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes = append(p.writes, w)
}

// setDropStatus loses that share of the answers to status writes.
func (p *apiProxy) setDropStatus(share float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropStatus = share
}

// blackhole answers nothing for d: requests in flight (watches included)
// are cut, new ones hang and are then hung up on.
func (p *apiProxy) blackhole(d time.Duration) {
	p.mu.Lock()
	over := make(chan struct{})
	p.blackholeUntil, p.blackholeOver = time.Now().Add(d), over
	for _, cancel := range p.inflight {
		cancel()
	}
	p.mu.Unlock()
	time.AfterFunc(d, func() { close(over) })
}

// writesOf returns a copy of the writes recorded.
func (p *apiProxy) writesOf() []proxiedWrite {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxiedWrite(nil), p.writes...)
}

func (p *apiProxy) droppedAnswers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}
