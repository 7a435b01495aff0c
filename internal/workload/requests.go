package workload

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/sluicehq/sluice/internal/quota"
)

// Requests are the amounts one pod asks for, per resource, in the exact
// units of internal/quota.
type Requests map[corev1.ResourceName]int64

// PodRequests computes the effective request of one pod as the kubelet and
// scheduler do: the containers plus the sidecars (restartable init
// containers), or the largest init container step if larger, plus the pod
// overhead. A limit stands in for a missing request, as API defaulting
// would do for a real pod.
func PodRequests(spec *corev1.PodSpec) Requests {
	total := Requests{}
	for i := range spec.Containers {
		total.add(containerRequests(&spec.Containers[i]))
	}
	sidecars := Requests{}
	initPeak := Requests{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		step := containerRequests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.add(step)
			step = sidecars.clone()
		} else {
			step.add(sidecars)
		}
		initPeak.max(step)
	}
	total.add(sidecars)
	total.max(initPeak)
	for name, q := range spec.Overhead {
		total[name] = quota.AddSat(total[name], quota.ToAmount(name, q))
	}
	return total
}

func containerRequests(c *corev1.Container) Requests {
	r := Requests{}
	for name, q := range c.Resources.Requests {
		r[name] = quota.ToAmount(name, q)
	}
	for name, q := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; !ok {
			r[name] = quota.ToAmount(name, q)
		}
	}
	return r
}

func (r Requests) add(other Requests) {
	for name, v := range other {
		r[name] = quota.AddSat(r[name], v)
	}
}

func (r Requests) max(other Requests) {
	for name, v := range other {
		if v > r[name] {
			r[name] = v
		}
	}
}

func (r Requests) clone() Requests {
	out := make(Requests, len(r))
	out.add(r)
	return out
}

// Scaled returns the requests of count pods.
func (r Requests) Scaled(count int32) Requests {
	out := make(Requests, len(r))
	for name, v := range r {
		out[name] = quota.MulSat(v, int64(count))
	}
	return out
}
