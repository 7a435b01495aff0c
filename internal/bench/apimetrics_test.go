package bench

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const apiServerMetrics = `# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="kueue.x-k8s.io",resource="workloads",scope="resource",subresource="",verb="POST",version="v1beta2"} 300
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kueue.x-k8s.io",resource="workloads",scope="resource",subresource="status",verb="PATCH",version="v1beta2"} 900
apiserver_request_total{code="409",component="apiserver",dry_run="",group="kueue.x-k8s.io",resource="workloads",scope="resource",subresource="status",verb="PATCH",version="v1beta2"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kueue.x-k8s.io",resource="workloads",scope="namespace",subresource="",verb="LIST",version="v1beta2"} 12
apiserver_request_total{code="200",component="apiserver",dry_run="",group="kueue.x-k8s.io",resource="clusterqueues",scope="resource",subresource="status",verb="PATCH",version="v1beta2"} 40
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"} 50
`

func TestAPIWrites(t *testing.T) {
	families, err := parseMetrics(strings.NewReader(apiServerMetrics))
	if err != nil {
		t.Fatal(err)
	}
	got := apiWrites(families["apiserver_request_total"])
	want := writeCounts{
		"POST workloads.kueue.x-k8s.io":             300,
		"PATCH workloads.kueue.x-k8s.io/status":     900,
		"PATCH workloads.kueue.x-k8s.io/status 409": 7,
		"PATCH clusterqueues.kueue.x-k8s.io/status": 40,
		"PUT leases.coordination.k8s.io":            3,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("apiWrites (-want +got):\n%s", diff)
	}
	if n := workloadWrites(got); n != 1207 {
		t.Errorf("workloadWrites = %v, want 1207 (reads and other resources left out, conflicts counted)", n)
	}
	before := writeCounts{"POST workloads.kueue.x-k8s.io": 100, "PUT leases.coordination.k8s.io": 3}
	delta := got.minus(before)
	if delta["POST workloads.kueue.x-k8s.io"] != 200 {
		t.Errorf("minus: POST workloads = %v, want 200", delta["POST workloads.kueue.x-k8s.io"])
	}
	if _, kept := delta["PUT leases.coordination.k8s.io"]; kept {
		t.Errorf("minus kept a key that did not change: %v", delta)
	}
}

const managerMetrics = `# TYPE sluice_admission_cycle_duration_seconds histogram
sluice_admission_cycle_duration_seconds_bucket{le="0.05"} 90
sluice_admission_cycle_duration_seconds_bucket{le="0.1"} 97
sluice_admission_cycle_duration_seconds_bucket{le="0.25"} 100
sluice_admission_cycle_duration_seconds_bucket{le="+Inf"} 100
sluice_admission_cycle_duration_seconds_sum 3.2
sluice_admission_cycle_duration_seconds_count 100
# TYPE sluice_admission_cycle_slowest_seconds gauge
sluice_admission_cycle_slowest_seconds 0.21
# TYPE sluice_admitted_workloads_total counter
sluice_admitted_workloads_total 512
# TYPE sluice_status_writes_total counter
sluice_status_writes_total{result="ok",write="admission"} 500
sluice_status_writes_total{result="conflict",write="admission"} 12
`

func TestCyclesFrom(t *testing.T) {
	families, err := parseMetrics(strings.NewReader(managerMetrics))
	if err != nil {
		t.Fatal(err)
	}
	want := cycleStats{Cycles: 100, Over100ms: 3, SlowestSeconds: 0.21, Admitted: 512,
		Writes: map[string]float64{"admission ok": 500, "admission conflict": 12}}
	if diff := cmp.Diff(want, cyclesFrom(families), cmp.AllowUnexported(cycleStats{})); diff != "" {
		t.Errorf("cyclesFrom (-want +got):\n%s", diff)
	}
	if got := cyclesFrom(nil); !reflect.DeepEqual(got, cycleStats{}) {
		t.Errorf("cyclesFrom(no metrics) = %+v, want zero", got)
	}
}
