// Package webhook owns the admission rules of the kueue.x-k8s.io API that CEL
// can't express (the "webhook:" rules of the spec). Validation is written as
// pure functions returning a field.ErrorList, so every rejection names its
// field path and rule, and the webhook adapters only translate to admission
// responses. It must not read or write other objects: rules that need the
// cluster's state belong to controllers.
package webhook
