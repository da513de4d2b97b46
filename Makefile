# Roomcast: the README's two commands are `make demo` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
BUILD_FLAGS ?=

.PHONY: setup build release demo test home-assistant bench clean

## The Debian packages each job needs (scripts/setup.sh names the groups): a build or a package
## installs no test servers.
setup:
	@bash scripts/setup.sh test

build:
	@bash scripts/setup.sh build
	$(SWIFT) build $(BUILD_FLAGS)

## Release build. edge-agent, aggregator and roomcast-sim come out linked for deployment: Swift runtime
## and Foundation linked in, relocations packed; edge-agent's functions placed together (Package.swift,
## docs/performance.md).
release:
	@bash scripts/setup.sh build
	$(SWIFT) build -c release $(BUILD_FLAGS)

## The main job: the whole system on an embedded default, no radio needed.
demo: release
	@bash scripts/setup.sh run
	@SWIFT="$(SWIFT)" BUILD_FLAGS="$(BUILD_FLAGS)" bash scripts/demo.sh

## Every test. Unit and integration tests (real mosquitto brokers, processes and faults, btvirt, a real
## Home Assistant) in a debug build; then the scenario evaluations (Tests/RoomcastScenarioTests: the
## recordings and simulated homes replayed through the agents and the aggregator, and scored) in a
## release build of their own (.build/scenario-release, so `make release` keeps its build), where the
## replays run several times faster and leave the timing-bound tests alone.
## Installs (once) the Home Assistant releases the HA tests run against first (`home-assistant`
## below); with ROOMCAST_HOME_ASSISTANT=0, or without a Python a release needs, those tests skip
## with a message (under CI=true they fail instead).
SCENARIO_BUILD = -c release --scratch-path .build/scenario-release
test: setup home-assistant
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	$(SWIFT) test --skip-build $(BUILD_FLAGS) --skip RoomcastScenarioTests
	@# Release builds leave out testability unless asked; the tests use @testable imports.
	$(SWIFT) build $(SCENARIO_BUILD) --build-tests -Xswiftc -enable-testing $(BUILD_FLAGS)
	$(SWIFT) test $(SCENARIO_BUILD) --skip-build $(BUILD_FLAGS) --filter RoomcastScenarioTests

## The Home Assistant releases the HA tests run against, 2024.3.3 and 2025.4.4, each installed once
## into its own virtualenv from PyPI (scripts/setup-home-assistant.sh); ROOMCAST_HOME_ASSISTANT=0
## leaves them out. A release whose Python this machine lacks (2025.4.4 needs 3.13, which Debian 12
## does not ship) is left out with a message, its tests skipping; under CI=true that is an error.
home-assistant:
	@if [ "$${ROOMCAST_HOME_ASSISTANT:-1}" != 0 ]; then \
	  for v in 2024.3.3 2025.4.4; do \
	    bash scripts/setup-home-assistant.sh $$v >/dev/null && continue; rc=$$?; \
	    case "$${CI:-}" in true|True|TRUE|1) exit $$rc ;; esac; \
	    if [ $$rc -ne 69 ]; then exit $$rc; fi; \
	    echo "home-assistant: Home Assistant $$v left out (no Python for it); its tests will skip" >&2; \
	  done; fi

## Benchmarks print numbers (release build).
## (A broker, btmon and the controller emulation beside the build: the test group.)
bench: setup release
	@bash scripts/bench.sh

clean:
	rm -rf .build

## Soak: an hour of a busy simulated home at x60 through mosquitto, agents and aggregator
## (about a minute): memory and file-descriptor curves, error-level log lines.
.PHONY: soak
soak: setup
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

## Installable binaries (docs/deployment.md): the three programs built self-contained and stripped into
## .build/dist/bin, their debug info in .build/dist/debug/<program>.debug (found through a gnu_debuglink).
## dist-test runs them with the toolchain hidden: --version, a whole replay, config errors (a few seconds).
.PHONY: dist dist-test
dist:
	@bash scripts/setup.sh build package
	@SWIFT="$(SWIFT)" BUILD_FLAGS="$(BUILD_FLAGS)" bash scripts/package/dist.sh

dist-test: dist
	@bash scripts/package/test-binaries.sh

## Debian packages for this machine's architecture into build/deb/ (docs/deployment.md):
## roomcast-edge-agent, roomcast-aggregator, roomcast-sim and their -dbgsym; lintian must pass.
## package-test: dist-test, then the packages installed, run and purged in a clean debootstrapped
## Debian root (cached under ~/.cache/roomcast; that step runs through sudo when not root).
.PHONY: deb package-test
deb: dist
	@bash scripts/package/deb.sh

package-test: deb
	@bash scripts/package/test-binaries.sh
	@# A clean root and chroot need root; only that step runs as root, so the build stays the user's.
	@# root's own HOME: its cache must not land, root-owned, in the user's ~/.cache.
	@if [ "$$(id -u)" -eq 0 ]; then bash scripts/package/test-debs.sh; else sudo -E HOME=/root bash scripts/package/test-debs.sh; fi
