# Stagedoor. "make" lists the targets. Local services: scripts/ensure-services.sh.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# make run, without Docker (override any of them: make run REDIS_URL=...)
DATABASE_URL ?= postgres://postgres:postgres@127.0.0.1:5432/stagedoor?sslmode=disable
REDIS_URL    ?= redis://127.0.0.1:6379/0
PAYRAIL_ADDR ?= 127.0.0.1:8090

# make test and make bench (internal/testenv reads these)
export STAGEDOOR_TEST_DATABASE_URL ?= postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable
export STAGEDOOR_TEST_REDIS_URL    ?= redis://127.0.0.1:6379/0

.PHONY: help run run-docker run-local test bench lint build services

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-11s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## Run Stagedoor on :8080: run-docker if a Docker engine answers, else run-local
	@if docker info >/dev/null 2>&1; then $(MAKE) --no-print-directory run-docker; \
	else $(MAKE) --no-print-directory run-local; fi

run-docker: ## Run the whole stack in Docker (docker compose up --build)
	@if docker compose version >/dev/null 2>&1; then docker compose up --build; \
	else docker-compose up --build; fi

run-local: build ## Run Payrail and Stagedoor here, on local PostgreSQL and Redis
	bash scripts/ensure-services.sh stagedoor
	DATABASE_URL='$(DATABASE_URL)' bin/stagedoor seed
	@# One shell: Payrail runs in the background until serve exits (or Ctrl-C).
	PAYRAIL_ADDR='$(PAYRAIL_ADDR)' PAYRAIL_DATABASE_URL='$(DATABASE_URL)' bin/stagedoor payrail & payrail=$$!; \
	trap 'kill $$payrail 2>/dev/null || true' EXIT; \
	DATABASE_URL='$(DATABASE_URL)' REDIS_URL='$(REDIS_URL)' PAYRAIL_URL='http://$(PAYRAIL_ADDR)' \
	  bin/stagedoor serve

test: lint services ## gofmt and go vet, then all tests with -race against local PostgreSQL and Redis
	go test -race -count=1 -timeout 15m ./...

bench: services ## Run the benchmarks
	go test -run '^$$' -bench . -benchmem ./...

lint: ## Fail on unformatted files (gofmt -l), then go vet
	@files="$$(gofmt -l .)"; \
	if [ -n "$$files" ]; then echo "gofmt: not formatted (run gofmt -w on them):"; echo "$$files"; exit 1; fi
	go vet ./...

build: ## Build bin/stagedoor
	go build -o bin/stagedoor ./cmd/stagedoor

services: ## Make sure PostgreSQL and Redis answer on 127.0.0.1 (installs/starts them if needed)
	bash scripts/ensure-services.sh
