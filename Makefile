# sluice: `make dev` runs a local cluster with sluice in it; `make test` runs
# every test. Both build what they need first.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

K8S_VERSION := v1.37.2
BIN         := $(CURDIR)/bin
K8S_BIN     := $(BIN)/k8s
TOOLS_DIR   := hack/tools
TOOLS_MOD   := $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum
K8S_LDFLAGS := -s -w -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
  -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 \
  -X k8s.io/component-base/version.gitTreeState=clean
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
CONTROLLER_GEN := go tool controller-gen
GO_TEST_FLAGS ?= -count=1 -timeout 45m
# The unit and integration suites run with the race detector; the e2e suite
# runs the real binary (built without it) and gains nothing from it.
RACE        ?= -race
RACE_PKGS   := ./apis/... ./internal/... ./cmd/... ./config/... ./test/integration/...
LINT        := $(BIN)/golangci-lint
LINT_MOD    := hack/lint/go.mod hack/lint/go.sum
# Fuzz targets (package:function); make test runs their seed corpora, make
# fuzz explores each for FUZZ_TIME.
FUZZ_TIME   ?= 1m
FUZZ_TARGETS := internal/quota:FuzzSaturatingArithmetic internal/quota:FuzzTreeChargeAvailable \
  internal/workload:FuzzPodRequests internal/scheduler:FuzzScheduleCycle internal/webhook:FuzzValidators \
  internal/integration/job:FuzzValidateJob internal/integration/pod:FuzzValidatePod \
  internal/integration/jobset:FuzzValidateJobSet internal/integration/ray:FuzzRayPodSets internal/integration/mpijob:FuzzMPIJob \
  internal/integration/trainjob:FuzzTrainJob
# Where `make dev` keeps its data; `make dev DEV_FLAGS=--keep` keeps it on exit.
DEV_DATA    ?= $(CURDIR)/.dev
DEV_FLAGS   ?=
BENCH       ?= baseline
# Other projects' controllers that `sluice dev --with` runs (make addons):
# each in bin/k8s/addons/<name>/ with its CRDs and rendered webhooks.
ADDONS_DIR  := hack/addons
ADDONS_MOD  := $(ADDONS_DIR)/go.mod $(ADDONS_DIR)/go.sum
ADDONS_BIN  := $(K8S_BIN)/addons
# The Kubeflow trainer pins Kubernetes libraries of its own: a module apart.
TRAINER_DIR := hack/trainer
TRAINER_MOD := $(TRAINER_DIR)/go.mod $(TRAINER_DIR)/go.sum
# KubeRay's operator, a module apart for the same reason.
KUBERAY_DIR := hack/kuberay
KUBERAY_MOD := $(KUBERAY_DIR)/go.mod $(KUBERAY_DIR)/go.sum
# Kubeflow's MPI operator, a module apart for the same reason.
MPI_DIR     := hack/mpi
MPI_MOD     := $(MPI_DIR)/go.mod $(MPI_DIR)/go.sum
# CodeFlare's AppWrapper controller, a module apart for the same reason.
AW_DIR      := hack/appwrapper
AW_MOD      := $(AW_DIR)/go.mod $(AW_DIR)/go.sum
# The other projects' controllers `make dev` runs (none by default, so a
# first make dev builds only the control plane and sluice); each is built
# the first time it is named: DEV_WITH=jobset,lws.
DEV_WITH    ?=
# (A name not known is left to sluice dev, which says which are.)
KNOWN_ADDONS := jobset lws trainer ray mpi appwrapper
comma       := ,
DEV_ADDONS  := $(foreach a,$(filter $(KNOWN_ADDONS),$(subst $(comma), ,$(DEV_WITH))),$(ADDONS_BIN)/$(a)/controller)
KUEUE_BENCH_DIR := hack/kueuebench
KUEUE_BENCH_MOD := $(KUEUE_BENCH_DIR)/go.mod $(KUEUE_BENCH_DIR)/go.sum
KUEUE_BENCH_BIN := $(BIN)/kueuebench
VS_KUEUE_FLAGS ?=
HELM        := $(BIN)/helm
HELM_MOD    := hack/helm/go.mod hack/helm/go.sum
# The image: platforms built by `make image`, where `make image-push` and
# `make release` point (REGISTRY=ghcr.io/you gives ghcr.io/you/sluice).
PLATFORMS   ?= linux/amd64 linux/arm64
REGISTRY    ?= ghcr.io/sluicehq
IMAGE_REPO  ?= $(REGISTRY)/sluice
IMAGE_DIR   := $(BIN)/image
DIST        := $(CURDIR)/dist
RELEASE     := go run ./hack/release

.PHONY: image image-push release helm chromium
.PHONY: addons
.PHONY: all build tools generate verify lint test test-unit test-integration test-e2e test-unit-integration fuzz stress drills dev bench bench-vs-kueue bench-properties fmt vet clean

all: build

## build: bin/sluice
build:
	go build -ldflags "-X main.version=$(VERSION)" -o $(BIN)/sluice ./cmd/sluice

## tools: the upstream control plane built from Go modules (rebuilt only when missing or when hack/tools changes)
tools: $(K8S_BIN)/kube-apiserver $(K8S_BIN)/etcd $(K8S_BIN)/kubectl \
  $(K8S_BIN)/kube-controller-manager $(K8S_BIN)/kube-scheduler $(K8S_BIN)/kwok

$(K8S_BIN)/kube-apiserver: $(TOOLS_MOD)
	@echo ">> building kube-apiserver $(K8S_VERSION) from Go modules: about 10-12 minutes on a cold Go build cache, seconds afterwards"
	cd $(TOOLS_DIR) && go build -ldflags='$(K8S_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(K8S_BIN)/etcd: $(TOOLS_MOD)
	@echo ">> building etcd from Go modules"
	cd $(TOOLS_DIR) && go build -ldflags='-s -w' -o $@ go.etcd.io/etcd/server/v3

$(K8S_BIN)/kubectl: $(TOOLS_MOD)
	@echo ">> building kubectl $(K8S_VERSION) from Go modules"
	cd $(TOOLS_DIR) && go build -ldflags='$(K8S_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kubectl

$(K8S_BIN)/kube-controller-manager: $(TOOLS_MOD)
	@echo ">> building kube-controller-manager $(K8S_VERSION) from Go modules"
	cd $(TOOLS_DIR) && go build -ldflags='$(K8S_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(K8S_BIN)/kube-scheduler: $(TOOLS_MOD)
	@echo ">> building kube-scheduler $(K8S_VERSION) from Go modules"
	cd $(TOOLS_DIR) && go build -ldflags='$(K8S_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-scheduler

$(K8S_BIN)/kwok: $(TOOLS_MOD)
	@echo ">> building kwok from Go modules"
	cd $(TOOLS_DIR) && go build -ldflags='-s -w' -o $@ sigs.k8s.io/kwok/cmd/kwok

## addons: the JobSet, LeaderWorkerSet, Kubeflow trainer, KubeRay, MPI and AppWrapper controllers, built from their own modules (hack/addons, hack/trainer, hack/kuberay, hack/mpi, hack/appwrapper) with their CRDs and webhook configurations beside them
addons: $(foreach a,$(KNOWN_ADDONS),$(ADDONS_BIN)/$(a)/controller)

# build-addon: $(1) the folder of the module that pins it, $(2) the
# project's module, $(3) its main package, $(4) its CRD files (a glob) and
# $(5) its webhook kustomization, both inside the project's module (none:
# the controller runs without webhooks).
define build-addon
	@echo ">> building $(3) from its module ($(1)): about 5 minutes on a cold Go build cache"
	cd $(1) && go build -ldflags='-s -w' -o $@.tmp $(3)
	dir="$$(cd $(1) && go list -m -f '{{.Dir}}' $(2))" && rm -rf $(@D)/crds && mkdir -p $(@D)/crds && \
	  cp "$$dir"/$(4) $(@D)/crds/ $(if $(5),&& $(K8S_BIN)/kubectl kustomize "$$dir/$(5)" > $(@D)/webhooks.yaml)
	mv $@.tmp $@
endef

$(ADDONS_BIN)/jobset/controller: $(ADDONS_MOD) $(K8S_BIN)/kubectl
	$(call build-addon,$(ADDONS_DIR),sigs.k8s.io/jobset,sigs.k8s.io/jobset,config/components/crd/bases/*.yaml,config/components/webhook)

$(ADDONS_BIN)/lws/controller: $(ADDONS_MOD) $(K8S_BIN)/kubectl
	$(call build-addon,$(ADDONS_DIR),sigs.k8s.io/lws,sigs.k8s.io/lws/cmd,config/crd/bases/*.yaml,config/webhook)

$(ADDONS_BIN)/trainer/controller: $(TRAINER_MOD) $(K8S_BIN)/kubectl
	$(call build-addon,$(TRAINER_DIR),github.com/kubeflow/trainer/v2,github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager,manifests/base/crds/*.yaml,manifests/base/webhook)

$(ADDONS_BIN)/ray/controller: $(KUBERAY_MOD) $(K8S_BIN)/kubectl
	$(call build-addon,$(KUBERAY_DIR),github.com/ray-project/kuberay/ray-operator,github.com/ray-project/kuberay/ray-operator,config/crd/bases/*.yaml,)

$(ADDONS_BIN)/mpi/controller: $(MPI_MOD) $(K8S_BIN)/kubectl
	$(call build-addon,$(MPI_DIR),github.com/kubeflow/mpi-operator,github.com/kubeflow/mpi-operator/cmd/mpi-operator,manifests/base/kubeflow.org_mpijobs.yaml,)

$(ADDONS_BIN)/appwrapper/controller: $(AW_MOD) $(K8S_BIN)/kubectl
	$(call build-addon,$(AW_DIR),github.com/project-codeflare/appwrapper,github.com/project-codeflare/appwrapper/cmd,config/crd/bases/*.yaml,)

## generate: deepcopy, CRDs, webhook configuration and RBAC from the Go markers
generate:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...
	go tool openapi-gen --output-dir apis/visibility/openapi --output-pkg github.com/sluicehq/sluice/apis/visibility/openapi \
		--output-file zz_generated.openapi.go --go-header-file hack/boilerplate.go.txt --report-filename /dev/null \
		./apis/visibility/v1beta1 ./apis/visibility/v1beta2 k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/version
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/kueue/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) webhook paths=./internal/... output:webhook:artifacts:config=config/webhook
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./internal/... output:rbac:artifacts:config=config/rbac
	$(RELEASE) chart-sync --repo .

## verify: generated files are current, code is formatted, vetted and linted
verify: generate lint
	@bash hack/check-tree.sh
	@if [ -n "$$(git status --porcelain -- apis config charts)" ]; then \
	  echo "generated files are stale; run 'make generate' and commit:"; git status --porcelain -- apis config charts; exit 1; fi
	@if [ -n "$$(gofmt -l $$(git ls-files '*.go'))" ]; then echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; fi
	go vet ./...

## lint: golangci-lint (.golangci.yaml), built from Go modules by hack/lint
lint: $(LINT)
	$(LINT) run ./...

$(LINT): $(LINT_MOD)
	@echo ">> building golangci-lint from Go modules (a few minutes on a cold Go build cache)"
	cd hack/lint && go build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

## helm: bin/helm, built from Helm's Go module (hack/helm)
helm: $(HELM)

$(HELM): $(HELM_MOD)
	@echo ">> building helm from Go modules (about 2 minutes on a cold Go build cache)"
	cd hack/helm && go build -o $@ helm.sh/helm/v4/cmd/helm

## image: the multi-platform OCI image (PLATFORMS), from Go alone, into bin/image (an OCI layout) and bin/image.digest
image:
	@rm -rf $(BIN)/image-build
	@for p in $(PLATFORMS); do echo ">> sluice for $$p"; \
	  CGO_ENABLED=0 GOOS=$${p%%/*} GOARCH=$${p##*/} go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" \
	    -o $(BIN)/image-build/$${p%%/*}_$${p##*/}/sluice ./cmd/sluice; done
	$(RELEASE) image --out $(IMAGE_DIR) --version $(VERSION) --revision "$$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
	  --created "$$(git log -1 --format=%ct 2>/dev/null || echo 0)" \
	  $(foreach p,$(PLATFORMS),--binary $(p)=$(BIN)/image-build/$(subst /,_,$(p))/sluice)

## image-push: push bin/image to $(IMAGE_REPO):$(VERSION) (REGISTRY=...), with the local Docker credentials
image-push: image
	$(RELEASE) push --layout $(IMAGE_DIR) --ref $(IMAGE_REPO):$(VERSION)

## release: dist/sluice.yaml (kubectl install) and dist/sluice-<version>.tgz (Helm chart), the image pinned by digest
release: image helm
	$(RELEASE) manifests --repo . --image "$(IMAGE_REPO):$(VERSION)@$$(cat $(IMAGE_DIR).digest)" --out $(DIST)/sluice.yaml
	$(RELEASE) chart --repo . --out $(BIN)/chart/sluice --version $(VERSION) --digest "$$(cat $(IMAGE_DIR).digest)"
	$(HELM) lint --strict $(BIN)/chart/sluice
	$(HELM) package $(BIN)/chart/sluice --destination $(DIST)
	@ls -l $(DIST)

## test: unit, integration (real kube-apiserver + etcd) and end-to-end tests
test: test-unit-integration test-e2e

## test-unit-integration: the unit and integration tests, with -race (the first half of make test)
test-unit-integration: tools addons helm image chromium $(KUEUE_BENCH_BIN)/kubectl-kueue
	KUBEBUILDER_ASSETS=$(K8S_BIN) go test $(GO_TEST_FLAGS) $(RACE) $(RACE_PKGS)

test-unit:
	go test $(GO_TEST_FLAGS) $(RACE) ./apis/... ./internal/... ./cmd/... ./config/...

test-integration: tools helm addons
	KUBEBUILDER_ASSETS=$(K8S_BIN) go test $(GO_TEST_FLAGS) $(RACE) ./test/integration/...

## drills: the fault drills (leader killed and frozen, lost answers, API blackhole, control plane restarts, webhook down, a soak of SOAK): about 40 minutes, 18 without the soak
SOAK        ?= 20m
DRILLS_RUN  ?= .
drills: tools stress
	KUBEBUILDER_ASSETS=$(K8S_BIN) SLUICE_SOAK=$(SOAK) go test -tags drills -count=1 -timeout 90m -v -run '$(DRILLS_RUN)' ./test/drills/

## stress: the load test and HoldAndDrain (TestStopPolicies) 20 times on a real API server, two suites at once; any violation fails
STRESS_RUNS ?= 10
STRESS_TEST  = KUBEBUILDER_ASSETS=$(K8S_BIN) go test -count=$(STRESS_RUNS) -timeout 80m -v \
  -run '^(TestQuotaNeverExceededUnderLoad|TestStopPolicies)$$' ./test/integration/admission/
stress: tools
	@mkdir -p $(BIN); a=0; b=0; \
	  $(STRESS_TEST) > $(BIN)/stress-1.log 2>&1 & p1=$$!; \
	  $(STRESS_TEST) > $(BIN)/stress-2.log 2>&1 & p2=$$!; \
	  wait $$p1 || a=$$?; wait $$p2 || b=$$?; \
	  echo ">> runs: $$(cat $(BIN)/stress-*.log | grep -c '^--- PASS: TestQuotaNeverExceededUnderLoad') load, $$(cat $(BIN)/stress-*.log | grep -c '^--- PASS: TestStopPolicies') HoldAndDrain passed"; \
	  grep -h -- '--- FAIL\|exceed\|above what\|_test.go:[0-9]*: ' $(BIN)/stress-*.log | grep -v 'invariant held' || true; \
	  [ $$a = 0 ] && [ $$b = 0 ]

## fuzz: explore every fuzz target for FUZZ_TIME each (make test runs only their seed corpora)
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=./$${t%%:*}; name=$${t##*:}; \
	  echo ">> $$name in $$pkg for $(FUZZ_TIME)"; \
	  go test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZ_TIME) $$pkg || exit 1; done

test-e2e: tools addons image chromium $(KUEUE_BENCH_BIN)/kubectl-kueue
	KUBEBUILDER_ASSETS=$(K8S_BIN) go test $(GO_TEST_FLAGS) ./test/e2e/...

## dev: a local cluster with sluice in it (and the DEV_WITH controllers, each built the first time it is named), in the foreground until Ctrl-C
dev: tools build $(DEV_ADDONS)
	$(BIN)/sluice dev --assets $(K8S_BIN) --data-dir $(DEV_DATA) --kubeconfig-out $(DEV_DATA)/kubeconfig --with '$(DEV_WITH)' $(DEV_FLAGS)

## bench: the preemption/fair-sharing property test at a large size, then admission throughput and latency (BENCH=baseline|saturation|large|smoke|multikueue); the report goes to bin/bench-$(BENCH).json
bench: tools build bench-properties
	$(BIN)/sluice bench --generator bench/$(BENCH).yaml --assets $(K8S_BIN) --out $(BIN)/bench-$(BENCH).json

## bench-properties: seeded random runs of the pure cycle (preemption, fair sharing, quota changes), 5 seeds x 10,000 cycles each way, and of the write path's interleavings, 500 seeds x 2,000 steps
bench-properties:
	SLUICE_PROPERTY_STEPS=10000 SLUICE_PROPERTY_SEEDS=5 go test -count=1 -timeout 30m -run TestPreemptionProperties -v ./internal/scheduler/
	SLUICE_WRITEPATH_SEEDS=500 SLUICE_WRITEPATH_STEPS=2000 go test -count=1 -timeout 30m -run TestWritePathProperties ./internal/apply/

## bench-vs-kueue: Kueue's own scheduler benchmark (its runner) with Kueue's minimalkueue, then with sluice, on bench/$(BENCH).yaml; one table, and bin/bench-vs-kueue-$(BENCH).json (VS_KUEUE_FLAGS="--qps 500 --burst 1000" raises the runner's client limits)
bench-vs-kueue: tools build $(KUEUE_BENCH_BIN)/runner $(KUEUE_BENCH_BIN)/minimalkueue
	$(BIN)/sluice bench-vs-kueue --generator bench/$(BENCH).yaml --assets $(K8S_BIN) \
	  --runner $(KUEUE_BENCH_BIN)/runner --minimalkueue $(KUEUE_BENCH_BIN)/minimalkueue \
	  --kueue-dir "$$(cd $(KUEUE_BENCH_DIR) && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)" \
	  --kueue-version "$$(cd $(KUEUE_BENCH_DIR) && go list -m -f '{{.Version}}' sigs.k8s.io/kueue)" \
	  --work-dir $(BIN)/bench-vs-kueue-$(BENCH) --out $(BIN)/bench-vs-kueue-$(BENCH).json $(VS_KUEUE_FLAGS)

# Kueue's benchmark tools, built from Kueue's published module in a module
# of their own (hack/kueuebench): never part of sluice's build.
## chromium: Debian's Chromium, for the dashboard's browser test (installed once, with apt)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@command -v chromium >/dev/null || { echo ">> installing Debian's chromium"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium; }

# Kueue's kubectl plugin, for the e2e test that runs it against sluice.
$(KUEUE_BENCH_BIN)/kubectl-kueue: $(KUEUE_BENCH_MOD)
	@echo ">> building Kueue's kubectl plugin from sigs.k8s.io/kueue (hack/kueuebench)"
	cd $(KUEUE_BENCH_DIR) && go build -o $@ sigs.k8s.io/kueue/cmd/kueuectl

$(KUEUE_BENCH_BIN)/%: $(KUEUE_BENCH_MOD)
	@echo ">> building Kueue's $* from sigs.k8s.io/kueue (hack/kueuebench)"
	cd $(KUEUE_BENCH_DIR) && go build -o $@ sigs.k8s.io/kueue/test/performance/scheduler/$*

clean:
	rm -rf $(BIN)/sluice $(DEV_DATA) $(BIN)/image $(BIN)/image-build $(BIN)/chart $(DIST)
