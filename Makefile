# Roomcast: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
BUILD_FLAGS ?=

.PHONY: setup build release demo test bench clean

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build $(BUILD_FLAGS)

## Release build. edge-agent comes out linked for deployment on a Pi: Swift runtime and Foundation
## linked in, functions it runs placed together, relocations packed (Package.swift, docs/performance.md).
release: setup
	$(SWIFT) build -c release $(BUILD_FLAGS)

## The main job: the whole system on an embedded default, no radio needed.
demo: release
	@bash scripts/demo.sh

## Every test: unit, integration against real mosquitto brokers and a real Home Assistant, end to end.
## Installs (once) the Home Assistant releases the HA tests run against, 2024.3.3 and 2025.4.4
## (scripts/setup-home-assistant.sh, from PyPI); ROOMCAST_HOME_ASSISTANT=0 leaves them out, and those
## tests then skip with a message.
test: setup
	@if [ "$${ROOMCAST_HOME_ASSISTANT:-1}" != 0 ]; then \
	  for v in 2024.3.3 2025.4.4; do bash scripts/setup-home-assistant.sh $$v >/dev/null; done; fi
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	$(SWIFT) test --skip-build $(BUILD_FLAGS)

## Benchmarks print numbers (release build).
bench: release
	@bash scripts/bench.sh

clean:
	rm -rf .build

## Soak: an hour of a busy simulated home at x60 through mosquitto, agents and aggregator
## (about a minute): memory and file-descriptor curves, error-level log lines.
.PHONY: soak
soak: build
	@bash scripts/soak.sh

## Reliability (docs/reliability.md): libFuzzer harnesses for a bounded time (FUZZ_SECONDS per
## harness), and the test suite under AddressSanitizer and ThreadSanitizer.
.PHONY: fuzz sanitize
fuzz: setup
	@bash scripts/fuzz.sh

sanitize: setup
	@bash scripts/sanitizers.sh

## Regenerate Sources/EdgeAgent/link-order.txt (needs valgrind), the edge-agent link order (docs/performance.md).
.PHONY: agent-link-order
agent-link-order: setup
	@bash scripts/agent-link-order.sh
