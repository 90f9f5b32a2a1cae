# ImageTables: the commands a new user and CI run. `make help` lists them.
SWIFT ?= swift
RELEASE_BIN = .build/release

.PHONY: help deps build test sanitize demo docs bench soak fuzz clean

help:
	@echo "make demo   build, then bake samples/ into tables/ with manifests/demo.yaml"
	@echo "make test   build and run every test (installs libvips-dev when missing and root)"
	@echo "make sanitize  every test under AddressSanitizer, workers and C code too (5 minutes after its build)"
	@echo "make docs   DocC archives of the library products, failing on any broken link"
	@echo "make bench  release build, then the benchmarks (figures in docs/PERFORMANCE.md)"
	@echo "make soak   release build, then 1,000 bakes killed at random while sources change (7 minutes)"
	@echo "make fuzz   libFuzzer with AddressSanitizer on the table reader, the manifest validator and source bytes (FUZZ_SECONDS each, 180)"
	@echo "make build  debug build of everything"
	@echo "make clean  remove build output and demo tables"

deps:
	@./scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

test:
	@./scripts/ensure-deps.sh test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Every test again, built with AddressSanitizer (Swift, C and the workers they start) in a build
# directory of its own. Leaks are not checked: libvips and GLib keep caches for the process's life,
# and a table closed while a filler still holds its staged pixels leaves them on purpose. Tests
# that limit or measure memory are skipped (`Sanitizers.any` in the tests): the sanitizer's shadow
# memory is terabytes of address space. The runtime cache's tests run apart, after the others:
# Swift Testing runs synchronous tests on the cooperative pool's threads, which the bakes' tests
# hold while they wait for processes, for most of a run that the sanitizer makes about ten
# minutes long, and the cache's tests, which need the pool, waited out their 300 s so in CI.
ASAN = --sanitize=address --scratch-path .build-asan
sanitize:
	@./scripts/ensure-deps.sh test
	$(SWIFT) build --build-tests $(ASAN)
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build $(ASAN) --skip 'ImageCacheTests\.'
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build $(ASAN) --filter 'ImageCacheTests\.'

demo: deps
	$(SWIFT) build --product imagetable
	$(SWIFT) build --product imagetable-worker
	.build/debug/imagetable bake --root . manifests/demo.yaml
	@echo
	@echo "The tables are in tables/. Next: bake again (nothing is decoded twice), or"
	@echo "  .build/debug/imagetable validate --root . manifests/*.yaml"

# The DocC plugin is a dependency only when IMAGETABLES_DOCS=1 (see Package.swift), and the
# documentation builds in a scratch directory of its own, so `make test`, CI and consumers of the
# package never resolve or build it.
DOC_TARGETS = ImageTableCore ImageManifest ImagePipeline ImageCache ImageCacheVips
docs: deps
	IMAGETABLES_DOCS=1 $(SWIFT) package --scratch-path .build-docs generate-documentation \
		$(addprefix --target ,$(DOC_TARGETS)) --warnings-as-errors
	@echo
	@echo "The archives are in .build-docs/plugins/Swift-DocC/outputs/. To browse one:"
	@echo "  IMAGETABLES_DOCS=1 swift package --scratch-path .build-docs --disable-sandbox preview-documentation --target ImageTableCore"

bench:
	@./scripts/ensure-deps.sh bench
	$(SWIFT) build -c release --product imagetable-bench
	$(SWIFT) build -c release --product imagetable
	$(SWIFT) build -c release --product imagetable-worker
	$(RELEASE_BIN)/imagetable-bench
	python3 Benchmarks/bake-bench.py --bin $(RELEASE_BIN)
	python3 Benchmarks/converge-bench.py --bin $(RELEASE_BIN)
	python3 Benchmarks/floor-bench.py --bin $(RELEASE_BIN)
	python3 Benchmarks/scale-bench.py --bin $(RELEASE_BIN)
	$(RELEASE_BIN)/imagetable-bench render bench-out/floor-src-small
	$(RELEASE_BIN)/imagetable-bench render bench-out/floor-src-photos

soak: deps
	$(SWIFT) build -c release --product imagetable
	$(SWIFT) build -c release --product imagetable-worker
	$(SWIFT) build -c release --product imagetable-bench
	python3 scripts/soak.py --bin $(RELEASE_BIN)

FUZZ_SECONDS ?= 180
fuzz: deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf .build .build-docs .build-asan tables bench-out
