package bench

import (
	"strings"
	"testing"
	"time"
)

func TestBaselineExpands(t *testing.T) {
	g, err := Load("../../bench/baseline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := g.Expand()
	if len(p.Queues) != 30 || len(p.Workloads) != 15000 {
		t.Fatalf("%d queues, %d workloads; want 30 and 15000", len(p.Queues), len(p.Workloads))
	}
	classes := map[string]int{}
	for _, w := range p.Workloads {
		classes[w.Class]++
	}
	if classes["small"] != 10500 || classes["medium"] != 3000 || classes["large"] != 1500 {
		t.Errorf("classes %v", classes)
	}
	first, last := p.Workloads[0], p.Workloads[len(p.Workloads)-1]
	if first.At != 0 || last.At != 58800*time.Millisecond || last.Class != "large" {
		t.Errorf("schedule from %v to %v (%s)", first.At, last.At, last.Class)
	}
	// Per cohort: 6 queues x (350x0.2s x 1 + 100x0.5s x 5 + 50x1s x 20) = 7920
	// CPU-seconds over 6 x 20 CPU: 66 s, later than the last arrival + run
	// (58.8 s + 1 s).
	if got := p.PackingBound(); got != 66*time.Second {
		t.Errorf("packing bound %v, want 66s", got)
	}
}

func TestParseRejects(t *testing.T) {
	cases := map[string]string{
		"cohorts: [{className: c, count: 1, queuesSets: [{className: q, count: 1, nominalQuota: 1, workloadsSets: [{count: 1, creationIntervalMs: 1, workloads: [{className: w, runtimeMs: 1, request: 0}]}]}]}]": "cohorts[0].queuesSets[0].workloadsSets[0].workloads[0].request",
		"cohorts: [{className: c, count: 0, queuesSets: []}]": "cohorts[0].count",
		"cohorts: [{className: c, count: 1, queueSets: []}]":  `unknown field "cohorts[0].queueSets"`,
		"cohorts: []": "cohorts: Required",
		"cohorts: [{className: c, count: 1, queuesSets: [{count: 1, nominalQuota: 1}]}]": "cohorts[0].queuesSets[0].className",
	}
	for doc, want := range cases {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v, want an error naming %s", doc, err, want)
		}
	}
}
