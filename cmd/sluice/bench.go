package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newBenchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "bench",
		Short: "Measure admission throughput and latency (not yet implemented)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("bench is not implemented yet: it arrives with the benchmark issue")
		},
	}
}
