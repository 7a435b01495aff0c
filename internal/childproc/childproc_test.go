package childproc

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWaitHealthyAndStop(t *testing.T) {
	p, err := Start("sleeper", "/bin/sh", []string{"-c", "exec sleep 60"}, filepath.Join(t.TempDir(), "sleeper.log"))
	if err != nil {
		t.Fatal(err)
	}
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer healthy.Close()
	if err := p.WaitHealthy(t.Context(), healthy.URL, 10*time.Second); err != nil {
		t.Fatalf("WaitHealthy: %v", err)
	}
	state := p.Stop(10 * time.Second)
	if state == nil || state.Success() {
		t.Fatalf("after Stop, state = %v, want ended by a signal", state)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Exited not closed after Stop")
	}
}

func TestWaitHealthyNamesAChildThatDied(t *testing.T) {
	p, err := Start("crasher", "/bin/sh", []string{"-c", "echo boom; exit 3"}, filepath.Join(t.TempDir(), "crasher.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer never.Close()
	err = p.WaitHealthy(t.Context(), never.URL, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "crasher exited") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("WaitHealthy = %v, want it to say the crasher exited with status 3", err)
	}
}

func TestStartReportsAMissingBinary(t *testing.T) {
	_, err := Start("ghost", filepath.Join(t.TempDir(), "no-such-binary"), nil, filepath.Join(t.TempDir(), "ghost.log"))
	if err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Fatalf("Start = %v, want an error naming the component", err)
	}
}
