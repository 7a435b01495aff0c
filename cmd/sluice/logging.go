package main

import (
	"flag"
	"fmt"

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

// setup installs the logger for controller-runtime and client-go (klog).
func (l *logFlags) setup() (logr.Logger, error) {
	switch l.format {
	case "json":
		l.zap.Development = false
	case "text":
		l.zap.Development = true
	default:
		return logr.Discard(), fmt.Errorf("--log-format: %q is not supported: use text or json", l.format)
	}
	logger := zap.New(zap.UseFlagOptions(&l.zap))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	return logger, nil
}
