# Stagedoor. "make" lists the targets. Local services: scripts/ensure-services.sh.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# make run without Docker (scripts/run-local.sh) reads DATABASE_URL, REDIS_URL,
# STAGEDOOR_ADDR (127.0.0.1:8080), PAYRAIL_ADDR and STAGEDOOR_ADMIN_TOKEN when
# given: make run STAGEDOOR_ADDR=:8080. make demo reads STAGEDOOR_URL.
#
# make test and make bench: scripts/ensure-services.sh --test-env decides where
# the tests' PostgreSQL and Redis come from (STAGEDOOR_TEST_DATABASE_URL and
# STAGEDOOR_TEST_REDIS_URL as set; else testcontainers when a Docker engine
# answers; else the local services, started or installed, their URLs exported)
# and prints the exports, if any, for the recipe to eval. make test's go tests
# (scripts/go-test.sh) then run on a PostgreSQL of their own
# (scripts/test-postgres.sh) unless STAGEDOOR_TEST_POSTGRES=given.

.PHONY: help run run-docker run-local demo test bench lint build services cluster cluster-down

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# exec: the sub-make takes this shell's place, so a SIGTERM to make reaches it.
run: ## Run Stagedoor on 127.0.0.1:8080: run-docker if a Docker engine answers, else run-local
	@if docker info >/dev/null 2>&1; then exec $(MAKE) --no-print-directory run-docker; \
	else exec $(MAKE) --no-print-directory run-local; fi

run-docker: ## Run the whole stack in Docker (docker compose up --build)
	@echo "run-docker: admin token: $${STAGEDOOR_ADMIN_TOKEN:-stagedoor-dev-admin-token} (docker-compose.yml); the demo data: docker compose logs seed"
	@echo "run-docker: Stagedoor on http://127.0.0.1:8080; the e-mail it sends: http://127.0.0.1:8025 (Mailpit's inbox)"
	@if docker compose version >/dev/null 2>&1; then exec docker compose up --build; \
	else exec docker-compose up --build; fi

run-local: build ## Run Payrail and Stagedoor here, on local PostgreSQL and Redis (Ctrl-C stops both)
	@exec bash scripts/run-local.sh

demo: ## Run the whole flow against the running Stagedoor (make run first), as the demo data of .env.demo
	go run ./cmd/stagedoor demo

test: lint ## make lint, then the web pages' unit tests (node --test), then all Go tests (scripts/go-test.sh: -race, the browser tests after them without it; a PostgreSQL of the tests' own, local Redis, or testcontainers when Docker answers), then Lighthouse's scores of the pages
	@bash scripts/check-web.sh tests
	@bash scripts/ensure-browser.sh
	@bash scripts/ensure-ops.sh
	@bash scripts/ensure-mail.sh
	@services_env=$$(bash scripts/ensure-services.sh --test-env); eval "$$services_env"; \
	bash scripts/go-test.sh
	@bash scripts/lighthouse.sh

bench: ## Run the benchmarks (services as for make test)
	@services_env=$$(bash scripts/ensure-services.sh --test-env); eval "$$services_env"; \
	go test -run '^$$' -bench . -benchmem ./...

# staticcheck, pinned; go run fetches it through the module proxy.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: ## Fail on unformatted files (gofmt -l), then go vet and staticcheck, then the contract's lint (Spectral with OWASP, Redocly), then the web pages' type check (tsc)
	@files="$$(gofmt -l .)"; \
	if [ -n "$$files" ]; then echo "gofmt: not formatted (run gofmt -w on them):"; echo "$$files"; exit 1; fi
	go vet ./...
	go run $(STATICCHECK) ./...
	@bash scripts/lint-contract.sh
	@bash scripts/check-web.sh types

build: ## Build bin/stagedoor (with the web pages' npm packages, scripts/ensure-web.sh)
	@bash scripts/ensure-web.sh
	go build -o bin/stagedoor ./cmd/stagedoor

# make cluster: scripts/cluster/up.sh (what it starts, and the faults to try, in
# docs/operations.md, "A local cluster"); the processes run on after make returns.
cluster: build ## Start a local cluster: Redis Cluster 3+3, PgBouncer, Payrail, 3 instances behind HAProxy on :8080, Prometheus on :9090, Alertmanager on :9093
	@bash scripts/cluster/up.sh

cluster-down: ## Stop exactly what make cluster started (the pids in .cluster/)
	@bash scripts/cluster/down.sh

services: ## Make sure PostgreSQL and Redis answer on 127.0.0.1 (installs/starts them if needed)
	bash scripts/ensure-services.sh
