package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// logFlags selects text or JSON logs and binds zap's own flags for finer
// control (--zap-log-level and friends).
type logFlags struct {
	format string
	zap    zap.Options
}

func (l *logFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&l.format, "log-format", "text", "log format: text or json")
	goFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	l.zap.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
}

// setup installs the logger for controller-runtime and client-go (klog),
// writing to stderr.
func (l *logFlags) setup() (logr.Logger, error) {
	return l.setupTo(os.Stderr)
}

// validate checks the flags without installing anything.
func (l *logFlags) validate() error {
	if l.format != "text" && l.format != "json" {
		return fmt.Errorf("--log-format: %q is not supported: use text or json", l.format)
	}
	return nil
}

// setupTo installs the logger writing to w.
func (l *logFlags) setupTo(w io.Writer) (logr.Logger, error) {
	if err := l.validate(); err != nil {
		return logr.Discard(), err
	}
	l.zap.Development = l.format == "text"
	logger := zap.New(zap.UseFlagOptions(&l.zap), zap.WriteTo(w))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	return logger, nil
}
