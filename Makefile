# kubebuilder-style targets for troupe. `make help` lists them.
# Everything runs through npm and kubectl (whose built-in kustomize renders config/);
# nothing here needs Go or a kustomize binary.

# A failing `kubectl kustomize` must fail the pipeline it feeds.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

IMG ?= troupe:latest
KUBECTL ?= kubectl
NPM ?= npm
# The project's Node 24. Not `NODE`: npm exports NODE (its own, older Node) to scripts.
NODE_BIN ?= ./node_modules/.bin/node
CONTAINER_TOOL ?= docker
KIND_CLUSTER ?= kind
# Extra flags for `make run`, e.g. make run ARGS="--controllers=podsequence".
ARGS ?=
EXAMPLE ?= config/samples/example-podsequence.yaml

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Development

node_modules: package.json package-lock.json
	$(NPM) install
	@touch node_modules

.PHONY: build
build: node_modules ## Compile to build/ (and bundle the dashboard page).
	$(NPM) run build
	$(NODE_BIN) scripts/build-web.ts

.PHONY: test
test: node_modules ## Typecheck, lint and run every test (what CI runs).
	bash scripts/ensure-chromium.sh
	$(NPM) test

.PHONY: manifests
manifests: ## Regenerate dist/install.yaml: `kubectl kustomize config/default`.
	$(NODE_BIN) scripts/gen-install.ts

.PHONY: build-installer
build-installer: manifests ## kubebuilder's name for `make manifests`.

.PHONY: verify-manifests
verify-manifests: ## Fail when dist/install.yaml is not the rendering of config/default.
	$(NODE_BIN) scripts/gen-install.ts --check

.PHONY: run
run: node_modules ## Run the controller manager against the cluster of your kubeconfig.
	$(NPM) run troupe -- run $(ARGS)

.PHONY: up
up: node_modules ## Start the embedded cluster with the controllers (npm start).
	$(NPM) start

##@ Cluster

.PHONY: install
install: ## Install the CRDs (config/crd) into the cluster of your kubeconfig.
	$(KUBECTL) apply --server-side -k config/crd

.PHONY: uninstall
uninstall: ## Remove the CRDs (and with them every object of their kinds).
	$(KUBECTL) delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: ## Install config/default (CRDs, RBAC, the manager Deployment), running image IMG.
	$(KUBECTL) kustomize config/default | sed 's|image: troupe:latest|image: $(IMG)|' | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove everything deploy installed (the CRDs too, and every object of their kinds).
	$(KUBECTL) delete --ignore-not-found -k config/default

.PHONY: deploy-example
deploy-example: ## Apply a sample (EXAMPLE=path, default the PodSequence example).
	$(KUBECTL) apply -f $(EXAMPLE)

.PHONY: undeploy-example
undeploy-example: ## Delete the sample.
	$(KUBECTL) delete --ignore-not-found -f $(EXAMPLE)

##@ Image

.PHONY: docker-build
docker-build: ## Build the manager image IMG.
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image IMG.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: kind-push
kind-push: ## Load the image IMG into the kind cluster KIND_CLUSTER.
	kind load docker-image $(IMG) --name $(KIND_CLUSTER)
