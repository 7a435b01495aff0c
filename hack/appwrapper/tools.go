//go:build tools

// Package appwrapper pins CodeFlare's AppWrapper controller: `make addons`
// builds it for `sluice dev --with appwrapper` with its
// CustomResourceDefinition. It is a module apart because the controller
// builds against other Kubernetes libraries than sluice and the control
// plane; nothing here is linked into sluice, whose AppWrapper integration
// reads the same version's API types.
package appwrapper

import (
	_ "github.com/project-codeflare/appwrapper/cmd"
)
