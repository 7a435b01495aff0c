package pod

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/sluicehq/sluice/internal/integration"
)

// Event reasons of the standalone opt-in's notices.
const (
	EventStandaloneWithoutQueue      = "StandaloneWithoutQueue"
	EventStandaloneUnderQueuedParent = integration.EventStandaloneUnderQueuedParent
)

// noticeAttempts bounds how long a notice waits for its Pod to exist: the
// webhook answers before the Pod is stored, and a creation may still fail.
const noticeAttempts = 10

// Notices turns the webhook's verdicts on Pods that opted in without effect
// into Warning events on those Pods, once they exist (the webhook sees a
// Pod before it has a UID to attach an event to).
type Notices struct {
	APIReader client.Reader
	Recorder  recorder.EventRecorder

	queue   chan event.GenericEvent
	mu      sync.Mutex
	pending map[client.ObjectKey]*notice
}

type notice struct {
	reason, message string
	attempts        int
}

// NewNotices makes a Notices; SetupWithManager starts delivering.
func NewNotices(apiReader client.Reader, rec recorder.EventRecorder) *Notices {
	return &Notices{APIReader: apiReader, Recorder: rec, queue: make(chan event.GenericEvent, 1024), pending: map[client.ObjectKey]*notice{}}
}

// Add records a notice for the Pod ns/name. It never blocks: when the queue
// is full (or nothing delivers, on a replica that isn't the leader), the
// admission warning the creator saw is all there is.
func (n *Notices) Add(ns, name, reason, message string) {
	if n == nil || name == "" {
		return
	}
	key := client.ObjectKey{Namespace: ns, Name: name}
	n.mu.Lock()
	n.pending[key] = &notice{reason: reason, message: message}
	n.mu.Unlock()
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	select {
	case n.queue <- event.GenericEvent{Object: obj}:
	default:
		n.mu.Lock()
		delete(n.pending, key)
		n.mu.Unlock()
	}
}

func (n *Notices) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	n.mu.Lock()
	pending, ok := n.pending[req.NamespacedName]
	n.mu.Unlock()
	if !ok {
		return ctrl.Result{}, nil
	}
	p := &corev1.Pod{}
	err := n.APIReader.Get(ctx, req.NamespacedName, p)
	if apierrors.IsNotFound(err) && pending.attempts < noticeAttempts {
		pending.attempts++
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	n.mu.Lock()
	delete(n.pending, req.NamespacedName)
	n.mu.Unlock()
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	n.Recorder.Eventf(p, nil, corev1.EventTypeWarning, pending.reason, "Admit", "%s", pending.message)
	return ctrl.Result{}, nil
}

// SetupWithManager delivers the notices through a controller fed by Add.
func (n *Notices) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("pod-notices").
		WatchesRawSource(source.Channel(n.queue, &handler.EnqueueRequestForObject{})).
		Complete(n)
}
