# lease 1, call 3: pytest -m gpu on the branch, then the host's small CPU batches
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/site:$PWD
R=$PWD
timeout 420 python -m pytest -q -m gpu -n 8 -p no:cacheprovider > $OUT/pytest_gpu.log 2>&1
echo rc $? >> $OUT/pytest_gpu.log
tail -15 $OUT/pytest_gpu.log
(cd /tmp/t/ref && PYTHONPATH=/tmp/site:/tmp/t/ref timeout 60 python $R/.gpurun/cpu_small.py > $OUT/cpu_small.jsonl 2>&1)
(cd /tmp/t/ref && OMP_WAIT_POLICY=active PYTHONPATH=/tmp/site:/tmp/t/ref timeout 60 python $R/.gpurun/cpu_small.py >> $OUT/cpu_small.jsonl 2>&1)
lscpu > $OUT/lscpu.txt 2>&1; nproc >> $OUT/lscpu.txt
tail -5 $OUT/cpu_small.jsonl
