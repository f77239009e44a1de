#!/usr/bin/env bash
# s62a (the two patches: pytest -m gpu, bench_e2e preload/ahead) then s62c (device='auto'
# break-even) in one call.  Carry .stage/x .stage/cc; archives $OUT/s62a.tgz, $OUT/s62c.tgz.
bash .stage/x/s62c.sh
rm -rf $OUT/r
bash .stage/x/s62a.sh
