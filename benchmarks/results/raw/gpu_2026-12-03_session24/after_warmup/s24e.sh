mkdir -p $OUT
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_PROBLEM_CACHE=0
python3 -c "from caspar_backend.gpu_warmup import general_path as g; print('gpu warmup', g()); print('again', g())" > $OUT/gpu_warmup.log 2>&1; tail -2 $OUT/gpu_warmup.log
c=case19402_goc
for k in 1 2; do CASPAR_CACHE_DIR=/tmp/cc_$c timeout 45 python3 .gpurun/s24c.py $c >> $OUT/e2e.jsonl 2>> $OUT/e2e.err; done
cat $OUT/e2e.jsonl; tail -2 $OUT/e2e.err
export CASPAR_PROBLEM_CACHE=1 CASPAR_CACHE_DIR=/tmp/cc_prof
timeout 15 python3 .gpurun/s24d.py > $OUT/warm_prof0.log 2>&1; timeout 10 python3 .gpurun/s24d.py > $OUT/warm_prof1.log 2>&1; timeout 10 python3 .gpurun/s24d.py profile > $OUT/warm_prof.log 2>&1
head -1 $OUT/warm_prof0.log; head -1 $OUT/warm_prof1.log; head -1 $OUT/warm_prof.log
