#!/usr/bin/env bash
# Next lease: branch gen-tape (generated tapes on top of the generated chains), carried as
# .stage/gt (git archive minus benchmarks/results and docs), its kernels, extern state and
# Van der Pol's pattern prebuilt on the VM in .stage/ccg (build_patterns.py from that tree):
# dev_patterns.py (the loops kernel and interpreter vs the pattern kernel: bits and ms),
# the GPU tests of the pattern kernels (IK, optimal_control_200, the every-op model), IK
# batches of 1-256 (ik_small.py: a GPU service's batch latency), then
# Van der Pol B = 1,000 against IPOPT (vdp50.py) with the pattern kernel off and on.
# Carry .stage/p6 (or after it) .stage/x .stage/gt .stage/ccg.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/ccg
mkdir -p /tmp/ccg && cp -rn $R/.stage/ccg/. /tmp/ccg/
python3 -m pip install -q --no-index --no-deps --target /tmp/site $R/.stage/x/wheels/*.whl
cd $R/.stage/gt && export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
git -C $R log --oneline -1 > $OUT/commit.txt 2>/dev/null
timeout 120 python $R/.stage/x/dev_patterns.py $R/.stage/x/vdp_new.pkl.xz 2>&1 \
  | tee $OUT/dev_patterns.log | grep "^{"
echo "dev_patterns done at ${SECONDS}s"
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_patterns.py \
  -rf > $OUT/pytest_patterns.log 2>&1
echo "patterns pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_patterns.log
timeout 120 python $R/.stage/x/ik_small.py 2>&1 | tee $OUT/ik_small.log | grep "^{"
timeout $((570 - SECONDS)) python $R/.stage/x/vdp50.py 1000 2>&1 | tee $OUT/vdp50.log | grep "^{"
echo "done at ${SECONDS}s"
