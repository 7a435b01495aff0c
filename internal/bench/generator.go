// Package bench owns `sluice bench`: the generator files (the schema of
// Kueue's scheduler benchmark, so figures compare with published ones), the
// plan they expand to, the runner that plays a plan against an API server
// with the manager in its own process, the finish mimic, the API ceiling's
// replay and the report. It must not run the manager in its own process:
// the manager it measures is the sluice binary, started as a child, so that
// its CPU and memory are its own.
package bench

import (
	"fmt"
	"os"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Generator is a benchmark scenario file.
type Generator struct {
	Cohorts []CohortSet `json:"cohorts"`
}

// CohortSet is count cohorts of the same class.
type CohortSet struct {
	ClassName  string     `json:"className"`
	Count      int        `json:"count"`
	QueuesSets []QueueSet `json:"queuesSets"`
}

// QueueSet is count ClusterQueues of the same class in each cohort.
type QueueSet struct {
	ClassName           string             `json:"className"`
	Count               int                `json:"count"`
	NominalQuota        resource.Quantity  `json:"nominalQuota"`
	BorrowingLimit      *resource.Quantity `json:"borrowingLimit,omitempty"`
	ReclaimWithinCohort string             `json:"reclaimWithinCohort,omitempty"`
	WithinClusterQueue  string             `json:"withinClusterQueue,omitempty"`
	WorkloadsSets       []WorkloadSet      `json:"workloadsSets"`
}

// WorkloadSet creates, in each queue, count rounds of its workloads, one
// round every creationIntervalMs.
type WorkloadSet struct {
	Count              int             `json:"count"`
	CreationIntervalMs int             `json:"creationIntervalMs"`
	Workloads          []WorkloadClass `json:"workloads"`
}

// WorkloadClass is one kind of workload: a single pod requesting request
// CPU for runtimeMs.
type WorkloadClass struct {
	ClassName string            `json:"className"`
	RuntimeMs int               `json:"runtimeMs"`
	Priority  int32             `json:"priority"`
	Request   resource.Quantity `json:"request"`
}

// Load reads a generator file strictly and validates it.
func Load(path string) (*Generator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading generator: %w", err)
	}
	g, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("generator %s: %w", path, err)
	}
	return g, nil
}

// Parse decodes and validates a generator document.
func Parse(data []byte) (*Generator, error) {
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	g := &Generator{}
	strict, err := kjson.UnmarshalStrict(jsonData, g)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%v", strict)
	}
	if errs := g.validate(); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return g, nil
}

func (g *Generator) validate() field.ErrorList {
	var errs field.ErrorList
	positive := func(p *field.Path, v int) {
		if v < 1 {
			errs = append(errs, field.Invalid(p, v, "must be at least 1"))
		}
	}
	if len(g.Cohorts) == 0 {
		errs = append(errs, field.Required(field.NewPath("cohorts"), "a scenario needs at least one cohort set"))
	}
	for i, cs := range g.Cohorts {
		cp := field.NewPath("cohorts").Index(i)
		positive(cp.Child("count"), cs.Count)
		for j, qs := range cs.QueuesSets {
			qp := cp.Child("queuesSets").Index(j)
			positive(qp.Child("count"), qs.Count)
			if qs.ClassName == "" {
				errs = append(errs, field.Required(qp.Child("className"), "names the queues' class in the report"))
			}
			for k, ws := range qs.WorkloadsSets {
				wp := qp.Child("workloadsSets").Index(k)
				positive(wp.Child("count"), ws.Count)
				if ws.CreationIntervalMs < 0 {
					errs = append(errs, field.Invalid(wp.Child("creationIntervalMs"), ws.CreationIntervalMs, "must not be negative"))
				}
				for l, w := range ws.Workloads {
					lp := wp.Child("workloads").Index(l)
					if w.ClassName == "" {
						errs = append(errs, field.Required(lp.Child("className"), "names the workloads' class in the report"))
					}
					if w.Request.Sign() <= 0 {
						errs = append(errs, field.Invalid(lp.Child("request"), w.Request.String(), "must be positive"))
					}
					if w.RuntimeMs < 0 {
						errs = append(errs, field.Invalid(lp.Child("runtimeMs"), w.RuntimeMs, "must not be negative"))
					}
				}
			}
		}
	}
	return errs
}

// Plan is a generator expanded into objects and a creation schedule.
type Plan struct {
	Queues    []PlannedQueue
	Workloads []PlannedWorkload // sorted by At, then Name
}

// PlannedQueue is one ClusterQueue (with a LocalQueue of the same name).
type PlannedQueue struct {
	Name, Class, Cohort string
	NominalMilliCPU     int64
	BorrowingMilliCPU   *int64
	ReclaimWithinCohort string
	WithinClusterQueue  string
}

// PlannedWorkload is one Workload and when to create it.
type PlannedWorkload struct {
	Name, Queue, Class string
	Priority           int32
	RequestMilliCPU    int64
	Runtime            time.Duration
	At                 time.Duration
}

// Expand builds the plan: cohorts <class>-<i>, queues <cohort>-<class>-<j>,
// workloads <queue>-<class>-<n>.
func (g *Generator) Expand() *Plan {
	p := &Plan{}
	for _, cs := range g.Cohorts {
		for i := range cs.Count {
			cohort := fmt.Sprintf("%s-%d", cs.ClassName, i)
			for _, qs := range cs.QueuesSets {
				for j := range qs.Count {
					q := PlannedQueue{Name: fmt.Sprintf("%s-%s-%d", cohort, qs.ClassName, j), Class: qs.ClassName, Cohort: cohort,
						NominalMilliCPU: qs.NominalQuota.MilliValue(), ReclaimWithinCohort: qs.ReclaimWithinCohort, WithinClusterQueue: qs.WithinClusterQueue}
					if qs.BorrowingLimit != nil {
						v := qs.BorrowingLimit.MilliValue()
						q.BorrowingMilliCPU = &v
					}
					p.Queues = append(p.Queues, q)
					n := 0
					for _, ws := range qs.WorkloadsSets {
						for round := range ws.Count {
							at := time.Duration(round*ws.CreationIntervalMs) * time.Millisecond
							for _, w := range ws.Workloads {
								p.Workloads = append(p.Workloads, PlannedWorkload{
									Name: fmt.Sprintf("%s-%s-%d", q.Name, w.ClassName, n), Queue: q.Name, Class: w.ClassName,
									Priority: w.Priority, RequestMilliCPU: w.Request.MilliValue(),
									Runtime: time.Duration(w.RuntimeMs) * time.Millisecond, At: at})
								n++
							}
						}
					}
				}
			}
		}
	}
	sort.SliceStable(p.Workloads, func(i, j int) bool {
		if p.Workloads[i].At != p.Workloads[j].At {
			return p.Workloads[i].At < p.Workloads[j].At
		}
		return p.Workloads[i].Name < p.Workloads[j].Name
	})
	return p
}

// PackingBound is the least wall time any scheduler could reach for the
// plan: the later of (the last arrival plus its runtime) and, for each
// cohort, the CPU-seconds its workloads demand divided by the cohort's
// capacity (the sum of its queues' nominal quotas).
func (p *Plan) PackingBound() time.Duration {
	var bound time.Duration
	capacity := map[string]int64{}
	cohortOf := map[string]string{}
	for _, q := range p.Queues {
		capacity[q.Cohort] += q.NominalMilliCPU
		cohortOf[q.Name] = q.Cohort
	}
	demand := map[string]float64{} // milliCPU x seconds
	for _, w := range p.Workloads {
		bound = max(bound, w.At+w.Runtime)
		demand[cohortOf[w.Queue]] += float64(w.RequestMilliCPU) * w.Runtime.Seconds()
	}
	for cohort, d := range demand {
		if c := capacity[cohort]; c > 0 {
			bound = max(bound, time.Duration(d/float64(c)*float64(time.Second)))
		}
	}
	return bound
}
