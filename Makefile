# The two commands a newcomer types (see README.md). Both install what they need first.
.PHONY: quick test build bundle

quick:          ## run the quick suite on the best device present (CPU here), write a result
	scripts/bootstrap.sh
	build/tipbench run --quick

test:           ## build everything (and the stack A/B build of requirements-stack-b.txt), run the test suite
	scripts/bootstrap.sh --test
	scripts/bootstrap.sh --torch $$(sed -n 's/^torch==//p' requirements-stack-b.txt)
	cd build && ctest --output-on-failure --timeout 900 -j2

build:
	scripts/bootstrap.sh

bundle:         ## pack .bundle/ for a GPU machine without our build dependencies (docs/gpu.md)
	scripts/bundle.sh
