# issue 20: GPU warmup step, then end to end at case19402/case30000 (a fresh per-model
# cache: cold model; a second process: warm), SX case9241 setup with the GPU compile
mkdir -p $OUT
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONUNBUFFERED=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_PROBLEM_CACHE=0
python3 -c "from caspar_backend.gpu_warmup import general_path as g; print('gpu warmup', g()); print('again', g())" > $OUT/gpu_warmup.log 2>&1; cat $OUT/gpu_warmup.log | tail -2
for c in case19402_goc case30000_goc; do
  for k in 1 2; do CASPAR_CACHE_DIR=/tmp/cc_$c timeout 200 python3 .gpurun/s24c.py $c >> $OUT/e2e.jsonl 2>> $OUT/e2e.err; done
done
cat $OUT/e2e.jsonl; tail -3 $OUT/e2e.err
timeout 150 python3 benchmarks/bench_setup_sx.py --cases case9241_pegase --readers cached --device cuda --repeat 3 --out $OUT/sx_setup_gpu > $OUT/sx_setup_gpu.log 2>&1
echo "sx rc $?"; grep "^|" $OUT/sx_setup_gpu.log; grep '^{' $OUT/sx_setup_gpu.log | cut -c100-300
export CASPAR_PROBLEM_CACHE=1 CASPAR_CACHE_DIR=/tmp/cc_prof
python3 .gpurun/s24d.py > $OUT/warm_prof0.log 2>&1; python3 .gpurun/s24d.py > $OUT/warm_prof1.log 2>&1; python3 .gpurun/s24d.py profile > $OUT/warm_prof.log 2>&1
head -1 $OUT/warm_prof0.log; head -1 $OUT/warm_prof1.log; head -1 $OUT/warm_prof.log
