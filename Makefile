# onceproof: `make proofs` (the design matrix, needs only Go) and `make test`.
GO ?= go

.PHONY: help proofs test vet bench bench-compare

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s "$$(printf '\t')"

proofs: ## run the design matrix; rewrite results/matrix.md and results/counterexamples/
	$(GO) run ./cmd/onceproof matrix

vet: ## go vet and gofmt
	$(GO) vet ./...
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt: the files above need formatting (gofmt -w)"; exit 1)

test: vet ## vet, then every test with the race detector
	$(GO) test -race -count=1 ./...

bench: ## run the benchmarks; write results/bench/new.txt
	mkdir -p results/bench
	$(GO) test -run='^$$' -bench=. -benchmem -count=6 ./bench/ | tee results/bench/new.txt

bench-compare: ## benchstat the committed baseline against results/bench/new.txt
	$(GO) tool benchstat results/bench/baseline.txt results/bench/new.txt
