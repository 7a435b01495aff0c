package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
	"github.com/sluicehq/sluice/apis/scheme"
	visibilityv1beta2 "github.com/sluicehq/sluice/apis/visibility/v1beta2"
)

//go:embed page.html
var pageTemplate string

//go:embed static
var static embed.FS

// settle is how long changes gather before the view is rendered and
// pushed again: a burst of admissions is one update, not hundreds.
const settle = 500 * time.Millisecond

// Server serves the dashboard.
type Server struct {
	cache  cache.Cache
	client kubernetes.Interface
	clock  clock.PassiveClock
	page   *template.Template

	mu          sync.Mutex
	subscribers map[chan string]struct{}
	changed     chan struct{}
}

// New builds a dashboard reading the cluster of restConfig, with the
// given clock (nil: the real one).
func New(restConfig *rest.Config, clk clock.PassiveClock) (*Server, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	page, err := template.New("page").Parse(pageTemplate)
	if err != nil {
		return nil, fmt.Errorf("parsing the page: %w", err)
	}
	c, err := cache.New(restConfig, cache.Options{Scheme: scheme.Scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, fmt.Errorf("creating the informers: %w", err)
	}
	cs, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	return &Server{cache: c, client: cs, clock: clk, page: page, subscribers: map[chan string]struct{}{}, changed: make(chan struct{}, 1)}, nil
}

// Run serves on listener until ctx ends: the informers first, then the
// page.
func (s *Server) Run(ctx context.Context, listener net.Listener) error {
	for _, obj := range []client.Object{&kueue.ClusterQueue{}, &kueue.LocalQueue{}, &kueue.Workload{}} {
		informer, err := s.cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.signal() },
			UpdateFunc: func(any, any) { s.signal() },
			DeleteFunc: func(any) { s.signal() },
		}); err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	go func() {
		if err := s.cache.Start(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "the dashboard's informers stopped")
		}
	}()
	if !s.cache.WaitForCacheSync(ctx) {
		return errors.New("the dashboard's informers did not sync")
	}
	go s.broadcast(ctx)

	mux := http.NewServeMux()
	assets, err := fs.Sub(static, "static")
	if err != nil {
		return err
	}
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /{$}", s.index)
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving the dashboard: %w", err)
	}
	return nil
}

func (s *Server) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// view reads the informers and, for the order of each queue's pending
// workloads, the visibility API.
func (s *Server) view(ctx context.Context) (View, error) {
	var cqs kueue.ClusterQueueList
	var lqs kueue.LocalQueueList
	var wls kueue.WorkloadList
	for _, l := range []client.ObjectList{&cqs, &lqs, &wls} {
		if err := s.cache.List(ctx, l); err != nil {
			return View{}, fmt.Errorf("reading %T: %w", l, err)
		}
	}
	pending := map[string][]visibilityv1beta2.PendingWorkload{}
	for _, cq := range cqs.Items {
		data, err := s.client.CoreV1().RESTClient().Get().
			AbsPath("/apis", visibilityv1beta2.GroupVersion.Group, visibilityv1beta2.GroupVersion.Version, "clusterqueues", cq.Name, "pendingworkloads").
			Param("limit", fmt.Sprint(waitingShown+1)).Do(ctx).Raw()
		if err != nil {
			continue // not served or not allowed: the workloads' own list, unordered
		}
		var summary visibilityv1beta2.PendingWorkloadsSummary
		if json.Unmarshal(data, &summary) == nil {
			pending[cq.Name] = summary.Items
		}
	}
	return buildView(s.clock.Now(), cqs.Items, lqs.Items, wls.Items, pending), nil
}

func (s *Server) render(ctx context.Context, name string) (string, error) {
	v, err := s.view(ctx)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := s.page.ExecuteTemplate(&b, name, v); err != nil {
		return "", fmt.Errorf("rendering the page: %w", err)
	}
	return b.String(), nil
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	html, err := s.render(r.Context(), "page")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(html))
}

// broadcast renders the view after each settled burst of changes and
// hands it to every open page.
func (s *Server) broadcast(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(settle):
		}
		s.mu.Lock()
		n := len(s.subscribers)
		s.mu.Unlock()
		if n == 0 {
			continue
		}
		html, err := s.render(ctx, "view")
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "rendering the dashboard")
			continue
		}
		s.mu.Lock()
		for ch := range s.subscribers {
			// The newest view replaces one a slow page has not taken yet.
			select {
			case <-ch:
			default:
			}
			ch <- html
		}
		s.mu.Unlock()
	}
}

// events streams the view to one page (server-sent events): now, then at
// every change.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ch := make(chan string, 1)
	s.mu.Lock()
	s.subscribers[ch] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subscribers, ch)
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	html, err := s.render(r.Context(), "view")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for {
		// One event: each line of the fragment as a data line.
		var b strings.Builder
		for line := range strings.SplitSeq(html, "\n") {
			b.WriteString("data: ")
			b.WriteString(line)
			b.WriteString("\n")
		}
		b.WriteString("\n")
		if _, err := w.Write([]byte(b.String())); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case html = <-ch:
		}
	}
}
