# The two commands a newcomer types (see README.md). Both install what they need first, and both
# log each stage's time (make times prints them: scripts/ci-times.py).
.PHONY: quick test build bundle times

quick:          ## install, build the tipbench binary alone, run the quick suite on the best device present
	TIPBENCH_MAKE_TARGET=quick scripts/quick.sh

test:           ## build everything (and the stack A/B build of requirements-stack-b.txt), run the test suite
	TIPBENCH_MAKE_TARGET=test scripts/test.sh

build:          ## install and build every target (tests included), run nothing
	TIPBENCH_MAKE_TARGET=build scripts/bootstrap.sh

bundle:         ## pack .bundle/ for a GPU machine without our build dependencies (docs/gpu.md)
	scripts/bundle.sh

times:          ## the stage times of the last cold and warm make quick / make test (scripts/ci-times.py)
	scripts/ci-times.py
