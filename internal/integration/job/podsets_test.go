package job

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/sluicehq/sluice/apis/kueue/v1beta2"
)

func jobWith(parallelism, completions *int32, minParallelism string) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"},
		Spec: batchv1.JobSpec{Parallelism: parallelism, Completions: completions}}
	if minParallelism != "" {
		j.Annotations = map[string]string{kueue.JobMinParallelismAnno: minParallelism}
	}
	return j
}

func TestPodSets(t *testing.T) {
	cases := []struct {
		name         string
		job          *batchv1.Job
		wantCount    int32
		wantMinCount *int32
		wantErr      string
	}{
		{"defaults to one pod", jobWith(nil, nil, ""), 1, nil, ""},
		{"parallelism", jobWith(ptr.To[int32](4), nil, ""), 4, nil, ""},
		{"capped by completions", jobWith(ptr.To[int32](4), ptr.To[int32](2), ""), 2, nil, ""},
		{"more completions than parallelism", jobWith(ptr.To[int32](3), ptr.To[int32](10), ""), 3, nil, ""},
		{"zero parallelism", jobWith(ptr.To[int32](0), nil, ""), 0, nil, ""},
		{"partial admission", jobWith(ptr.To[int32](5), nil, "2"), 5, ptr.To[int32](2), ""},
		{"min parallelism equal to the count", jobWith(ptr.To[int32](5), ptr.To[int32](3), "3"), 3, ptr.To[int32](3), ""},
		{"min parallelism above the count", jobWith(ptr.To[int32](5), ptr.To[int32](3), "4"), 0, nil, "between 1 and the Job's parallelism (3)"},
		{"min parallelism zero", jobWith(ptr.To[int32](5), nil, "0"), 0, nil, "between 1 and"},
		{"min parallelism not a number", jobWith(ptr.To[int32](5), nil, "half"), 0, nil, "must be an integer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			podSets, err := PodSets(tc.job)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), kueue.JobMinParallelismAnno) {
					t.Fatalf("error = %v, want one naming the annotation and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(podSets) != 1 || podSets[0].Name != PodSetName {
				t.Fatalf("pod sets = %+v, want one named main", podSets)
			}
			if podSets[0].Count != tc.wantCount {
				t.Errorf("count = %d, want %d", podSets[0].Count, tc.wantCount)
			}
			if got := podSets[0].MinCount; (got == nil) != (tc.wantMinCount == nil) || (got != nil && *got != *tc.wantMinCount) {
				t.Errorf("minCount = %v, want %v", got, tc.wantMinCount)
			}
		})
	}
}
