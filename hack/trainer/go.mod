// The modules whose CustomResourceDefinitions sluice's tests install but
// whose Go packages sluice can't be built with (the Kubeflow trainer's API
// needs other Kubernetes libraries than sluice's). Nothing here is
// compiled: `make crd-modules` downloads them, and the integration tests
// read the CRD files from the module cache.
module github.com/sluicehq/sluice/hack/crds

go 1.26.0

require github.com/kubeflow/trainer/v2 v2.2.0
